// refusal_test.cc - hipHostRegister of memory a pinning runtime cannot
// pin, and flags it does not know: the answers of clr's ihipHostRegister.
//
// Sources (hipamd/src/hip_memory.cpp, ihipHostRegister):
//  - clr (ROCm 6.x, ROCm/clr at 004c4f7c): "flags & ~(hipHostRegisterPortable
//    | hipHostRegisterMapped | hipExtHostRegisterCoarseGrained | ...
//    hipHostRegisterIoMemory)) return hipErrorInvalidValue;" and, when the
//    pages cannot be locked, "if (!mem->create(hostPtr, ...)) { ... return
//    hipErrorInvalidValue; }" (the current and rocm7 personalities);
//  - hipamd (ROCm 5.x, ROCm/hipamd at afdc89f8): the same create failure
//    "return hipErrorOutOfMemory;" (the legacy personality).
// A pin (hsa_amd_memory_lock, KFD userptr) cannot lock unmapped pages, nor
// pages it may not write (read-only without the read-only flag, PROT_NONE).
#include <stdint.h>
#include <string.h>

#include "sim_common.h"

static inline char *map_n(size_t n)
{
    return map_pages(n);
}

// Source: clr ihipHostRegister flags check (Portable, Mapped, IoMemory, bit 3,
// Uncached 0x80000000 accepted); AMD's hip-tests
// (catch/unit/memory/hipHostRegister.cc) pass 0xF0, 0xFFF2, 0xFFFFFFFF.
TEST(SimhipRefusal, UnknownFlagsAreInvalidValue)
{
    char *p = map_n(1);
    ASSERT_NE(p, nullptr);
    for (unsigned f : {0xF0u, 0xFFF2u, 0xFFFFFFFFu, 0x10u})
        EXPECT_EQ(hipHostRegister(p, page(), f), hipErrorInvalidValue) << std::hex << f;
    EXPECT_EQ(hipHostUnregister(p), hipErrorHostMemoryNotRegistered);
    for (unsigned f : {0x1u, 0x2u, 0x4u, 0x8u, 0xFu, 0x80000000u}) {
        EXPECT_EQ(hipHostRegister(p, page(), f), hipSuccess) << std::hex << f;
        unsigned got = 99;
        EXPECT_EQ(hipHostGetFlags(&got, p), hipSuccess);
        EXPECT_EQ(got, f);
        EXPECT_EQ(hipHostUnregister(p), hipSuccess);
    }
    munmap(p, page());
}

// Source: clr ihipHostRegister, mem->create failure -> hipErrorInvalidValue.
TEST(SimhipRefusal, HoleInTheMiddleIsRefused)
{
    char *p = map_n(3);
    ASSERT_NE(p, nullptr);
    ASSERT_EQ(munmap(p + page(), page()), 0);
    EXPECT_EQ(hipHostRegister(p, 3 * page(), 0), hipErrorInvalidValue);
    EXPECT_EQ(hipHostUnregister(p), hipErrorHostMemoryNotRegistered);
    munmap(p, 3 * page());
}

// Source: clr ihipHostRegister: the pin comes before the object map, so a
// range with holes is refused even where its base lies in a registered
// range (the case that simhip used to accept: issue 23, item 3).
TEST(SimhipRefusal, HeapPointerSpanningHolesIntoARegistrationIsRefused)
{
    char *m = map_n(16);
    ASSERT_NE(m, nullptr);
    ASSERT_EQ(hipHostRegister(m, 16 * page(), 0), hipSuccess);
    char *heap = (char *)malloc(64);
    ASSERT_NE(heap, nullptr);
    if (heap >= m) {
        free(heap);
        GTEST_SKIP() << "the heap lies above the mapping here";
    }
    EXPECT_EQ(hipHostRegister(heap, (size_t)(m + 100 - heap), 0), hipErrorInvalidValue);
    EXPECT_EQ(hipHostUnregister(heap), hipErrorHostMemoryNotRegistered);
    // Unmapped memory inside the registered mapping's reach, from above.
    EXPECT_EQ(hipHostRegister(m + 8 * page(), 64 * page(), 0), hipErrorInvalidValue);
    EXPECT_EQ(hipHostUnregister(m), hipSuccess);
    free(heap);
    munmap(m, 16 * page());
}

// Source: clr ihipHostRegister, mem->create failure (the pin needs write
// access); with bit 3 (hipHostRegisterReadOnly in 6.x) the pin is a read.
// The registration with the flag also shows that simhip never writes to
// pin: a write to these pages would kill the test with SIGSEGV.
TEST(SimhipRefusal, ReadOnlyMemoryNeedsTheReadOnlyFlag)
{
    char *p = map_n(2);
    ASSERT_NE(p, nullptr);
    memset(p, 0x33, 2 * page());
    ASSERT_EQ(mprotect(p, 2 * page(), PROT_READ), 0);
    EXPECT_EQ(hipHostRegister(p, 2 * page(), 0), hipErrorInvalidValue);
    EXPECT_EQ(hipHostUnregister(p), hipErrorHostMemoryNotRegistered);
    ASSERT_EQ(hipHostRegister(p, 2 * page(), 0x8), hipSuccess);
    void *d = nullptr;
    ASSERT_EQ(hipMalloc(&d, 64), hipSuccess);
    ASSERT_EQ(hipMemcpyAsync(d, p, 64, hipMemcpyHostToDevice, 0), hipSuccess);
    ASSERT_EQ(hipStreamSynchronize(0), hipSuccess);
    unsigned char back[64];
    ASSERT_EQ(hipMemcpy(back, d, 64, hipMemcpyDeviceToHost), hipSuccess);
    EXPECT_EQ(back[0], 0x33);
    EXPECT_EQ(back[63], 0x33);
    EXPECT_EQ(hipHostUnregister(p), hipSuccess);
    EXPECT_EQ(hipFree(d), hipSuccess);
    munmap(p, 2 * page());
}

// Source: clr ihipHostRegister, mem->create failure: PROT_NONE pages cannot
// be locked at all.
TEST(SimhipRefusal, ProtNoneIsRefusedEvenWithTheReadOnlyFlag)
{
    char *p = map_n(2);
    ASSERT_NE(p, nullptr);
    ASSERT_EQ(mprotect(p + page(), page(), PROT_NONE), 0);
    EXPECT_EQ(hipHostRegister(p, 2 * page(), 0), hipErrorInvalidValue);
    EXPECT_EQ(hipHostRegister(p, 2 * page(), 0x8), hipErrorInvalidValue);
    EXPECT_EQ(hipHostUnregister(p), hipErrorHostMemoryNotRegistered);
    munmap(p, 2 * page());
}

// Source: hipamd (ROCm 5.x) ihipHostRegister: the same failures are
// hipErrorOutOfMemory; the flags check is the one of current clr.
TEST(SimhipRefusal, LegacyPersonalityAnswersOutOfMemory)
{
    IN_CHILD_WITH_ENV("SIMHIP_PERSONALITY", "legacy", {
        char *p = map_n(3);
        CHILD_CHECK(p != nullptr);
        CHILD_CHECK(mprotect(p + 2 * page(), page(), PROT_READ) == 0);
        CHILD_CHECK(hipHostRegister(p, 3 * page(), 0) == hipErrorOutOfMemory);
        CHILD_CHECK(mprotect(p + 2 * page(), page(), PROT_NONE) == 0);
        CHILD_CHECK(hipHostRegister(p, 3 * page(), 0) == hipErrorOutOfMemory);
        CHILD_CHECK(munmap(p + page(), page()) == 0);
        CHILD_CHECK(hipHostRegister(p, 2 * page(), 0) == hipErrorOutOfMemory);
        CHILD_CHECK(hipHostRegister(p, page(), 0) == hipSuccess);
        CHILD_CHECK(hipHostUnregister(p) == hipSuccess);
    });
}

// Pinning writes nothing: a read-only page registers with the read-only flag
// (a write by the pin would be SIGSEGV) and its bytes are unchanged.
// Source: DESIGN section 7 ("never pinned by writing to it").
TEST(SimhipRefusal, RegisterWritesNoByte)
{
    char *p = map_n(1);
    ASSERT_NE(p, nullptr);
    ASSERT_EQ(mprotect(p, page(), PROT_READ), 0);
    unsigned char before[256];
    memcpy(before, p, sizeof before);
    ASSERT_EQ(hipHostRegister(p, page(), 0x8), hipSuccess);
    EXPECT_EQ(memcmp(before, p, sizeof before), 0);
    EXPECT_EQ(hipHostUnregister(p), hipSuccess);
    munmap(p, page());
}
