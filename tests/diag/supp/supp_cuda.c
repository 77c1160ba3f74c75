/*
 * supp_cuda.c - the CUDA face of supp_hip.c (driver API, simcuda):
 *   supp_cuda keep    libsuppholder_cuda.so pins a buffer, kept until exit
 *   supp_cuda double  a double unregister in this program
 */
#include <stdio.h>
#include <string.h>
#include "simcuda.h"

void *supp_holder_keep_cu(size_t size);

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "keep";
    CUdevice dev;
    CUcontext ctx;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) ||
        cuCtxSetCurrent(ctx)) {
        fprintf(stderr, "supp_cuda: no context\n");
        return 1;
    }
    int ok = 1;
    if (strcmp(mode, "keep") == 0) {
        ok = supp_holder_keep_cu(1 << 20) != NULL;
    } else if (strcmp(mode, "double") == 0) {
        static char buf[8192] __attribute__((aligned(4096)));
        ok = cuMemHostRegister_v2(buf, sizeof buf, 0) == CUDA_SUCCESS &&
             cuMemHostUnregister(buf) == CUDA_SUCCESS && cuMemHostUnregister(buf) != CUDA_SUCCESS;
    }
    if (!ok) {
        fprintf(stderr, "supp_cuda %s: a call failed\n", mode);
        return 1;
    }
    printf("OK\n");
    return 0;
}
