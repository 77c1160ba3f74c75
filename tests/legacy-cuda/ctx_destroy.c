/*
 * ctx_destroy.c - a worker with a context of its own: it pins a buffer,
 * uses it, unpins it and destroys its context at once; then the primary
 * context pins the same buffer again, uses it, unpins it and is reset at
 * once; a new primary context pins it a third time.
 *
 * No hazard on the bare driver. Under safepin the unregister returns
 * before the real one ran: destroying the context must first settle that
 * release (never early, never on a dead context: no runtime-error), and
 * the buffer can be registered again in the next context.
 */
#include "legacy_cuda.h"

#define N (64 * 1024)

static int buf[N];

static int round_trip(CUstream s, CUdeviceptr d, int seed)
{
    for (int i = 0; i < N; i++)
        buf[i] = lc_pattern((size_t)i, seed);
    CHECK(cuMemcpyHtoDAsync_v2(d, buf, sizeof buf, s));
    CHECK(cuStreamSynchronize(s));
    memset(buf, 0, sizeof buf);
    CHECK(cuMemcpyDtoHAsync_v2(buf, d, sizeof buf, s));
    CHECK(cuStreamSynchronize(s));
    return lc_verify("round trip", buf, N, seed);
}

int main(void)
{
    CUcontext primary = lc_init();
    CUdevice dev;
    CHECK(cuDeviceGet(&dev, 0));
    int ok = 1;

    CUcontext own;
    CHECK(cuCtxCreate_v2(&own, 0, dev));
    CUstream s;
    CUdeviceptr d;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CHECK(cuMemAlloc_v2(&d, sizeof buf));
    CHECK(cuMemHostRegister_v2(buf, sizeof buf, 0));
    ok &= round_trip(s, d, 1);
    CHECK(cuMemHostUnregister(buf));
    CHECK(cuMemFree_v2(d));
    CHECK(cuCtxDestroy_v2(own)); /* its streams go with it */

    CHECK(cuCtxSetCurrent(primary));
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CHECK(cuMemAlloc_v2(&d, sizeof buf));
    CHECK(cuMemHostRegister_v2(buf, sizeof buf, 0));
    ok &= round_trip(s, d, 2);
    CHECK(cuMemFree_v2(d));
    CHECK(cuStreamDestroy_v2(s));
    CHECK(cuMemHostUnregister(buf));
    CHECK(cuDevicePrimaryCtxReset_v2(dev)); /* right after the unregister */

    CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
    CHECK(cuCtxSetCurrent(primary));
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CHECK(cuMemAlloc_v2(&d, sizeof buf));
    CHECK(cuMemHostRegister_v2(buf, sizeof buf, 0));
    ok &= round_trip(s, d, 3);
    CHECK(cuMemHostUnregister(buf));
    CHECK(cuMemFree_v2(d));
    CHECK(cuStreamDestroy_v2(s));
    if (!ok)
        return 1;
    printf("OK\n");
    return 0;
}
