/*
 * hip_and_cuda.c - a HIP runtime and the CUDA driver in one process (two
 * devices, two drivers): the same memory registered with each. Bare each
 * driver pins it on its own and each unregister succeeds; under safepin
 * one runtime's range must not nest, refuse or answer for the other's
 * (it once answered 712 to CUDA for HIP's range, and nested HIP's
 * register in CUDA's range without telling the HIP runtime).
 */
#include "reach_cuda.h"

#include <string.h>
#include <sys/mman.h>

typedef int (*hreg_fn)(void *, size_t, unsigned);
typedef int (*hunreg_fn)(void *);
typedef int (*hflags_fn)(unsigned *, void *);

#define EXPECT0(what, call)                                                                       \
    do {                                                                                          \
        int e_ = (int)(call);                                                                     \
        printf("%s = %d\n", what, e_);                                                            \
        if (e_ != 0)                                                                              \
            bad++;                                                                                \
    } while (0)

int main(void)
{
    void *hh = dlopen("libamdhip64.so.5", RTLD_NOW | RTLD_LOCAL);
    void *ch = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!hh || !ch) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 2;
    }
    hreg_fn hreg = (hreg_fn)dlsym(hh, "hipHostRegister");
    hunreg_fn hunreg = (hunreg_fn)dlsym(hh, "hipHostUnregister");
    hflags_fn hflags = (hflags_fn)dlsym(hh, "hipHostGetFlags");
    CUresult (*init)(unsigned) = (CUresult(*)(unsigned))dlsym(ch, "cuInit");
    CUresult (*dev_get)(CUdevice *, int) = (CUresult(*)(CUdevice *, int))dlsym(ch, "cuDeviceGet");
    CUresult (*retain)(CUcontext *, CUdevice) =
        (CUresult(*)(CUcontext *, CUdevice))dlsym(ch, "cuDevicePrimaryCtxRetain");
    CUresult (*set_cur)(CUcontext) = (CUresult(*)(CUcontext))dlsym(ch, "cuCtxSetCurrent");
    CUresult (*reg)(void *, size_t, unsigned) =
        (CUresult(*)(void *, size_t, unsigned))dlsym(ch, "cuMemHostRegister_v2");
    CUresult (*unreg)(void *) = (CUresult(*)(void *))dlsym(ch, "cuMemHostUnregister");
    CUresult (*cflags)(unsigned *, void *) =
        (CUresult(*)(unsigned *, void *))dlsym(ch, "cuMemHostGetFlags");
    if (!hreg || !hunreg || !hflags || !init || !dev_get || !retain || !set_cur || !reg || !unreg ||
        !cflags)
        return 2;
    CUdevice d;
    CUcontext c;
    if (init(0) || dev_get(&d, 0) || retain(&c, d) || set_cur(c))
        return 2;
    size_t n = 16384;
    char *a = mmap(NULL, 4 * n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (a == MAP_FAILED)
        return 2;
    memset(a, 1, 4 * n);
    char *b = a + 2 * n;
    unsigned f;
    int bad = 0;
    /* HIP first, then CUDA on the same memory. */
    EXPECT0("hipHostRegister(a)", hreg(a, n, 0));
    EXPECT0("cuMemHostRegister_v2(a)", reg(a, n, 0));
    EXPECT0("cuMemHostGetFlags(a)", cflags(&f, a));
    EXPECT0("cuMemHostUnregister(a)", unreg(a));
    EXPECT0("hipHostGetFlags(a)", hflags(&f, a));
    EXPECT0("hipHostUnregister(a)", hunreg(a));
    /* CUDA first, then HIP. */
    EXPECT0("cuMemHostRegister_v2(b)", reg(b, n, 0));
    EXPECT0("hipHostRegister(b)", hreg(b, n, 0));
    EXPECT0("hipHostGetFlags(b)", hflags(&f, b));
    EXPECT0("hipHostUnregister(b)", hunreg(b));
    EXPECT0("cuMemHostGetFlags(b)", cflags(&f, b));
    EXPECT0("cuMemHostUnregister(b)", unreg(b));
    EXPECT0("munmap", munmap(a, 4 * n));
    if (bad)
        return 1;
    printf("OK\n");
    return 0;
}
