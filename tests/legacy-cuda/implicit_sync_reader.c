/*
 * implicit_sync_reader.c - results copied device-to-host into a registered
 * buffer, which the program unpins and reads at once, without a
 * synchronization of its own: it relies on cuMemHostUnregister waiting for
 * the device (which it does on CUDA: DESIGN section 3).
 *
 * No hazard on the bare driver; safepin must keep it working (G3's
 * unregister=ordered). Under unregister=async the program reads before the
 * copy landed: that is what the option says it does.
 */
#include "legacy_cuda.h"

#define N (256 * 1024 / sizeof(int))

static void slow_kernel(void *arg)
{
    (void)arg;
    usleep(100 * 1000); /* the device is busy for a while */
}

int main(void)
{
    lc_init();
    CUstream s;
    CUdeviceptr d;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CHECK(cuMemAlloc_v2(&d, N * sizeof(int)));
    int *src;
    CHECK(cuMemHostAlloc((void **)&src, N * sizeof(int), 0));
    for (size_t i = 0; i < N; i++)
        src[i] = lc_pattern(i, 21);
    CHECK(cuMemcpyHtoDAsync_v2(d, src, N * sizeof(int), s));
    CHECK(cuStreamSynchronize(s));
    static int out[N];
    CHECK(cuMemHostRegister_v2(out, sizeof out, 0));
    CHECK(simcudaLaunchKernel(s, slow_kernel, NULL));
    CHECK(cuMemcpyDtoHAsync_v2(out, d, sizeof out, s));
    CHECK(cuMemHostUnregister(out)); /* and read: no sync of its own */
    int ok = lc_verify("results read right after cuMemHostUnregister", out, N, 21);
    CHECK(cuStreamSynchronize(s));
    CHECK(cuMemFreeHost(src));
    CHECK(cuMemFree_v2(d));
    CHECK(cuStreamDestroy_v2(s));
    if (!ok)
        return 1;
    printf("OK\n");
    return 0;
}
