/* quickstart_cuda.c - the quick start's CUDA example (README.md, "Quick
 * start"): a driver-API program with the same bug as quickstart.c (a
 * registered buffer freed without cuMemHostUnregister). Runs on simcuda,
 * the simulated CUDA driver of the build tree:
 *
 *   cc -g -I/usr/local/cuda/include quickstart_cuda.c -o quickstart_cuda \
 *      -Lbuild/simcuda -l:libcuda.so.1
 *   LD_LIBRARY_PATH=build/simcuda scripts/safepin --strict -- ./quickstart_cuda
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                          \
    do {                                                                     \
        CUresult e_ = (call);                                                \
        if (e_ != CUDA_SUCCESS) {                                            \
            fprintf(stderr, "%s: error %d\n", #call, (int)e_);               \
            return 1;                                                        \
        }                                                                    \
    } while (0)

int main(void)
{
    size_t n = 1 << 20;
    CUdevice d;
    CUcontext ctx;
    CUstream stream;
    CUdeviceptr dev;
    char *buf = malloc(n);
    if (!buf)
        return 1;
    memset(buf, 7, n);
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&d, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, d));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    CHECK(cuMemAlloc(&dev, n));
    CHECK(cuMemHostRegister(buf, n, 0));
    CHECK(cuMemcpyHtoDAsync(dev, buf, n, stream));
    CHECK(cuStreamSynchronize(stream));
    free(buf); /* the bug: cuMemHostUnregister(buf) is missing */
    CHECK(cuMemFree(dev));
    CHECK(cuStreamDestroy(stream));
    puts("done");
    return 0;
}
