/* dlmopen of the driver into a new namespace: the program's calls through it. */
#define _GNU_SOURCE
#include "cuda_min.h"
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#define L(h, n) ((typeof(&n))dlsym(h, #n))
int main(void) {
    void *h = dlmopen(LM_ID_NEWLM, "libcuda.so.1", RTLD_NOW);
    if (!h) { printf("dlmopen: %s\n", dlerror()); return 2; }
    CUdevice d; CUcontext c;
    printf("init=%d\n", L(h, cuInit)(0)); L(h, cuDeviceGet)(&d, 0); L(h, cuDevicePrimaryCtxRetain)(&c, d); L(h, cuCtxSetCurrent)(c);
    char *p = mmap(NULL, 1 << 16, 3, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0); memset(p, 1, 1 << 16);
    printf("reg=%d\n", L(h, cuMemHostRegister_v2)(p, 1 << 16, 0));
    printf("reg2=%d\n", L(h, cuMemHostRegister_v2)(p, 1 << 16, 0));
    printf("unreg=%d\n", L(h, cuMemHostUnregister)(p));
    printf("unreg2=%d\n", L(h, cuMemHostUnregister)(p));
    printf("munmap=%d\n", munmap(p, 1 << 16));
    printf("dlclose=%d\n", dlclose(h));
    return 0;
}
