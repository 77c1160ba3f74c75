// refusal_test.cc - cuMemHostRegister of memory a pinning driver cannot pin:
// the H200's answers (driver 580, CUDA 13.0; the table of issue 23 and
// DESIGN section 3, "registration answers"), and the rule that simcuda pins
// without writing a byte of the program's memory.
#include <malloc.h>
#include <stdint.h>
#include <string.h>

#include "sc_common.h"

// Source: H200 table, "register 64 KiB mmap: 0" and "register from a heap
// pointer to 100 bytes inside that mapping (unmapped holes, overlaps the
// registration): 2 (CUDA_ERROR_OUT_OF_MEMORY)".
TEST(SimcudaRefusal, HeapPointerSpanningHolesIntoARegistrationIsOutOfMemory)
{
    sc_ctx();
    char *m = map_pages(16);
    ASSERT_NE(m, nullptr);
    ASSERT_EQ(cuMemHostRegister_v2(m, 16 * page(), 0), CUDA_SUCCESS);
    char *heap = (char *)malloc(64);
    ASSERT_NE(heap, nullptr);
    if (heap >= m) {
        free(heap);
        GTEST_SKIP() << "the heap lies above the mapping here";
    }
    size_t span = (size_t)(m + 100 - heap);
    long phys = sysconf(_SC_PHYS_PAGES);
    if (phys <= 0 || span / page() <= (size_t)phys) {
        free(heap);
        GTEST_SKIP() << "the span is not larger than this machine's memory";
    }
    EXPECT_EQ(cuMemHostRegister_v2(heap, span, 0), CUDA_ERROR_OUT_OF_MEMORY);
    // Nothing was registered by it: the heap block is not registered.
    EXPECT_EQ(cuMemHostUnregister(heap), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    EXPECT_EQ(cuMemHostUnregister(m), CUDA_SUCCESS);
    free(heap);
    munmap(m, 16 * page());
}

// Source: H200 table, "register 12 KiB whose middle page was unmapped: 1".
TEST(SimcudaRefusal, RangeWithAnUnmappedMiddlePageIsInvalidValue)
{
    sc_ctx();
    char *p = map_pages(3);
    ASSERT_NE(p, nullptr);
    ASSERT_EQ(munmap(p + page(), page()), 0);
    EXPECT_EQ(cuMemHostRegister_v2(p, 3 * page(), 0), CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(cuMemHostUnregister(p), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    // The mapped pages alone register.
    EXPECT_EQ(cuMemHostRegister_v2(p, page(), 0), CUDA_SUCCESS);
    EXPECT_EQ(cuMemHostUnregister(p), CUDA_SUCCESS);
    munmap(p, 3 * page());
}

// Source: H200 table, "register 4 KiB (mapped), unregister: 0, 0".
TEST(SimcudaRefusal, MappedPageRegistersAndUnregisters)
{
    sc_ctx();
    char *p = map_pages(1);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(cuMemHostRegister_v2(p, page(), 0), CUDA_SUCCESS);
    EXPECT_EQ(cuMemHostUnregister(p), CUDA_SUCCESS);
    munmap(p, page());
}

// Source: H200 table, "register 8 KiB PROT_READ, flags 0; then unregister:
// 1; 713" and "the same with CU_MEMHOSTREGISTER_READ_ONLY: 0". Registering
// with the flag also shows that simcuda never writes to pin: a write to
// these pages would kill the test with SIGSEGV.
TEST(SimcudaRefusal, ReadOnlyMemoryNeedsTheReadOnlyFlag)
{
    sc_ctx();
    char *p = map_pages(2);
    ASSERT_NE(p, nullptr);
    memset(p, 0x5a, 2 * page());
    ASSERT_EQ(mprotect(p, 2 * page(), PROT_READ), 0);
    EXPECT_EQ(cuMemHostRegister_v2(p, 2 * page(), 0), CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(cuMemHostUnregister(p), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    EXPECT_EQ(cuMemHostRegister_v2(p, 2 * page(), CU_MEMHOSTREGISTER_READ_ONLY), CUDA_SUCCESS);
    // The device reads it through the registration.
    int out = 0;
    ReadInt k = { (const int *)p, &out };
    ASSERT_EQ(simcudaLaunchKernel(nullptr, k_read, &k), CUDA_SUCCESS);
    ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
    EXPECT_EQ(out, 0x5a5a5a5a);
    EXPECT_EQ(cuMemHostUnregister(p), CUDA_SUCCESS);
    munmap(p, 2 * page());
}

// Source: H200 table, "register 8 KiB PROT_NONE: 1".
TEST(SimcudaRefusal, ProtNoneIsInvalidValueEvenWithTheReadOnlyFlag)
{
    sc_ctx();
    char *p = map_pages(2);
    ASSERT_NE(p, nullptr);
    ASSERT_EQ(mprotect(p, 2 * page(), PROT_NONE), 0);
    EXPECT_EQ(cuMemHostRegister_v2(p, 2 * page(), 0), CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(cuMemHostRegister_v2(p, 2 * page(), CU_MEMHOSTREGISTER_READ_ONLY),
              CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(cuMemHostUnregister(p), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    munmap(p, 2 * page());
}

// Source: H200 table, "register size SIZE_MAX: 1".
TEST(SimcudaRefusal, SizeMaxIsInvalidValue)
{
    sc_ctx();
    char *p = map_pages(1);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(cuMemHostRegister_v2(p, SIZE_MAX, 0), CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(cuMemHostUnregister(p), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    munmap(p, page());
}

// Pinning writes nothing: a read-only page registers with the read-only flag
// (a write by the pin would be SIGSEGV) and its bytes are unchanged.
// Source: DESIGN section 7 ("never pinned by writing to it").
TEST(SimcudaRefusal, RegisterWritesNoByte)
{
    sc_ctx();
    char *p = map_pages(1);
    ASSERT_NE(p, nullptr);
    ASSERT_EQ(mprotect(p, page(), PROT_READ), 0);
    unsigned char before[64];
    memcpy(before, p, sizeof before);
    // A write would fault: the page is read-only.
    ASSERT_EQ(cuMemHostRegister_v2(p, page(), CU_MEMHOSTREGISTER_READ_ONLY), CUDA_SUCCESS);
    EXPECT_EQ(memcmp(before, p, sizeof before), 0);
    EXPECT_EQ(cuMemHostUnregister(p), CUDA_SUCCESS);
    munmap(p, page());
}
