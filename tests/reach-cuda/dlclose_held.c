/*
 * dlclose_held.c - a dlopen user that closes the driver while safepin
 * still holds a release of its memory (the hold waits for an idle device),
 * then unmaps that memory and exits. Bare this just works; safepin must
 * not call into the unloaded driver (it crashed there once). With an
 * argument the driver is loaded with dlmopen into a namespace of its own.
 */
#include "reach_cuda.h"

#include <string.h>
#include <sys/mman.h>

int main(int argc, char **argv)
{
    (void)argv;
    void *h = argc > 1 ? dlmopen(LM_ID_NEWLM, "libcuda.so.1", RTLD_NOW)
                       : dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 2;
    }
    CUresult (*init)(unsigned) = (CUresult(*)(unsigned))dlsym(h, "cuInit");
    CUresult (*dev_get)(CUdevice *, int) = (CUresult(*)(CUdevice *, int))dlsym(h, "cuDeviceGet");
    CUresult (*retain)(CUcontext *, CUdevice) =
        (CUresult(*)(CUcontext *, CUdevice))dlsym(h, "cuDevicePrimaryCtxRetain");
    CUresult (*set_cur)(CUcontext) = (CUresult(*)(CUcontext))dlsym(h, "cuCtxSetCurrent");
    CUresult (*reg)(void *, size_t, unsigned) =
        (CUresult(*)(void *, size_t, unsigned))dlsym(h, "cuMemHostRegister_v2");
    CUresult (*unreg)(void *) = (CUresult(*)(void *))dlsym(h, "cuMemHostUnregister");
    if (!init || !dev_get || !retain || !set_cur || !reg || !unreg)
        return 2;
    CUdevice d;
    CUcontext c;
    size_t n = 1 << 20;
    char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return 2;
    memset(p, 1, n);
    if (init(0) || dev_get(&d, 0) || retain(&c, d) || set_cur(c) || reg(p, n, 0) || unreg(p)) {
        fprintf(stderr, "driver call failed\n");
        return 1;
    }
    if (dlclose(h) != 0) {
        fprintf(stderr, "dlclose: %s\n", dlerror());
        return 1;
    }
    if (munmap(p, n) != 0) {
        perror("munmap");
        return 1;
    }
    printf("OK\n");
    return 0;
}
