/* dlclose of the driver with releases held, then more work and exit; context switching threads. */
#define _GNU_SOURCE
#include "cuda_min.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#define L(h, n) ((typeof(&n))dlsym(h, #n))
int main(int argc, char **argv) {
    const char *c = argc > 1 ? argv[1] : "dlclose";
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    L(h, cuInit)(0); CUdevice d; L(h, cuDeviceGet)(&d, 0);
    CUcontext a, b; L(h, cuDevicePrimaryCtxRetain)(&a, d); L(h, cuCtxSetCurrent)(a);
    char *p = mmap(NULL, 1 << 20, 3, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0); memset(p, 1, 1 << 20);
    if (!strcmp(c, "dlclose")) {
        printf("reg=%d\n", L(h, cuMemHostRegister_v2)(p, 1 << 20, 0));
        printf("unreg=%d\n", L(h, cuMemHostUnregister)(p));
        printf("dlclose=%d\n", dlclose(h));
        printf("munmap=%d\n", munmap(p, 1 << 20));
        void *q = malloc(100); free(q);
        return 0;
    }
    if (!strcmp(c, "ctxswitch")) {
        L(h, cuCtxCreate_v2)(&b, 0, d); /* b current now */
        printf("reg_in_b=%d\n", L(h, cuMemHostRegister_v2)(p, 4096, 0));
        L(h, cuCtxSetCurrent)(a);
        printf("unreg_in_a=%d\n", L(h, cuMemHostUnregister)(p));
        printf("destroy_b=%d\n", L(h, cuCtxDestroy_v2)(b));
        printf("reg_again=%d\n", L(h, cuMemHostRegister_v2)(p, 4096, 0));
        printf("unreg_again=%d\n", L(h, cuMemHostUnregister)(p));
        L(h, cuCtxCreate_v2)(&b, 0, d);
        printf("reg_b2=%d\n", L(h, cuMemHostRegister_v2)(p, 4096, 0));
        printf("unreg_b2=%d\n", L(h, cuMemHostUnregister)(p));
        CUcontext cur = NULL; L(h, cuCtxGetCurrent)(&cur);
        printf("cur_is_b=%d\n", cur == b);
        printf("munmap=%d\n", munmap(p, 1 << 20));
        L(h, cuCtxGetCurrent)(&cur);
        printf("cur_is_b_after=%d\n", cur == b);
        printf("destroy_b2=%d\n", L(h, cuCtxDestroy_v2)(b));
        L(h, cuCtxGetCurrent)(&cur);
        printf("cur_after_destroy=%d\n", cur == NULL ? 0 : cur == a ? 1 : 2);
        printf("prim_release=%d\n", L(h, cuDevicePrimaryCtxRelease_v2)(d));
        return 0;
    }
    return 0;
}
