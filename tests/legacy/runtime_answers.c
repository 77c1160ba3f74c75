/*
 * runtime_answers - calls whose answer the runtime gives, passed through:
 *   - hipHostRegister of hipHostMalloc memory succeeds as a no-op (from
 *     HIP 7.2, clr refuses it with hipErrorHostMemoryAlreadyRegistered), and
 *     its hipHostUnregister says hipErrorHostMemoryNotRegistered;
 *   - hipHostRegister with a size that wraps the address space is
 *     hipErrorInvalidValue, even with a live registration above it;
 *   - hipFree of host memory just unregistered is hipErrorInvalidValue, as
 *     for any host memory (nothing registered is touched);
 *   - hipFree of an invalid pointer from a host function is
 *     hipErrorInvalidValue.
 */
#include <stdint.h>
#include "legacy.h"

static hipError_t in_callback = hipSuccess;

static void free_invalid(hipStream_t s, hipError_t status, void *ud)
{
    (void)s; (void)status;
    in_callback = hipFree(ud);
}

int main(void)
{
    void *hm;
    CHECK(hipHostMalloc(&hm, 1 << 20, 0));
    EXPECT_ERR(hipHostRegister(hm, 1 << 20, 0), legacy_runtime_version() >= 70200000
                                                     ? hipErrorHostMemoryAlreadyRegistered
                                                     : hipSuccess);
    EXPECT_ERR(hipHostUnregister(hm), hipErrorHostMemoryNotRegistered);
    CHECK(hipHostFree(hm));

    char *low = aligned_alloc(4096, 8192), *high = aligned_alloc(4096, 8192);
    if (!low || !high)
        return 2;
    char *above = high > low ? high : low, *below = high > low ? low : high;
    CHECK(hipHostRegister(above, 8192, 0));
    EXPECT_ERR(hipHostRegister(below, SIZE_MAX, 0), hipErrorInvalidValue);
    EXPECT_ERR(hipHostRegister(below, (size_t)0 - (uintptr_t)below + 4096, 0), hipErrorInvalidValue);
    CHECK(hipHostUnregister(above));

    char *buf = aligned_alloc(4096, 1 << 22);
    if (!buf)
        return 2;
    CHECK(hipHostRegister(buf, 1 << 22, 0));
    CHECK(hipHostUnregister(buf));
    EXPECT_ERR(hipFree(buf), hipErrorInvalidValue);

    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    CHECK(hipStreamAddCallback(s, free_invalid, (void *)(uintptr_t)0x1234000, 0));
    CHECK(hipStreamSynchronize(s));
    EXPECT_ERR(in_callback, hipErrorInvalidValue);
    CHECK(hipStreamDestroy(s));
    free(buf);
    free(low);
    free(high);
    return legacy_finish();
}
