/*
 * hipfree_in_callback - a stream callback frees device memory once the work
 * that used it is done (a cleanup-callback pattern). hipFree synchronizes
 * the device, so from a callback it waits for the callback itself: the
 * runtime deadlocks (simhip reports it and aborts). Under safepin the free
 * is made later, by its reaper (G8), and the data is intact.
 *
 * safepin tells device memory from host memory by the memory type
 * hipPointerGetAttributes reports, whose values changed in HIP 6.0 (device
 * memory: 1 in 5.x, 2 in 6.x): read with the 5.x values, the rocm7
 * personality's device memory looked like host memory and the real hipFree
 * ran inside the callback (the deadlock again).
 */
#include "legacy.h"

#define N (1 << 16)

static hipError_t in_callback = hipErrorUnknown;

static void free_device(hipStream_t s, hipError_t status, void *dev)
{
    (void)s; (void)status;
    in_callback = hipFree(dev);
}

int main(void)
{
    int *src = aligned_alloc(4096, N * sizeof(int)), *dst = aligned_alloc(4096, N * sizeof(int));
    if (!src || !dst)
        return 2;
    legacy_fill(src, N, 0, 7);
    memset(dst, 0, N * sizeof(int));
    CHECK(hipHostRegister(src, N * sizeof(int), 0));
    CHECK(hipHostRegister(dst, N * sizeof(int), 0));
    void *dev;
    CHECK(hipMalloc(&dev, N * sizeof(int)));
    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    CHECK(hipMemcpyAsync(dev, src, N * sizeof(int), hipMemcpyHostToDevice, s));
    CHECK(hipMemcpyAsync(dst, dev, N * sizeof(int), hipMemcpyDeviceToHost, s));
    CHECK(hipStreamAddCallback(s, free_device, dev, 0));
    CHECK(hipStreamSynchronize(s));
    EXPECT_ERR(in_callback, hipSuccess);
    legacy_verify("dst", dst, N, 0, 7, 0);
    CHECK(hipStreamDestroy(s));
    CHECK(hipHostUnregister(src));
    CHECK(hipHostUnregister(dst));
    free(src);
    free(dst);
    return legacy_finish();
}
