/* A HIP runtime and the CUDA driver in one process: each registers its own buffer, and the same
 * buffer is registered with both (two drivers, two devices). */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include "cuda_min.h"
typedef int (*hreg_t)(void *, size_t, unsigned);
typedef int (*hunreg_t)(void *);
int main(void) {
    void *hh = dlopen("libamdhip64.so.5", RTLD_NOW);
    if (!hh) { printf("no hip: %s\n", dlerror()); return 2; }
    hreg_t hreg = (hreg_t)dlsym(hh, "hipHostRegister"); hunreg_t hunreg = (hunreg_t)dlsym(hh, "hipHostUnregister");
    CUdevice d; CUcontext c; cuInit(0); cuDeviceGet(&d, 0); cuDevicePrimaryCtxRetain(&c, d); cuCtxSetCurrent(c);
    char *a = mmap(NULL, 65536, 3, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0); memset(a, 1, 65536);
    char *b = a + 32768;
    printf("hip_reg_a=%d\n", hreg(a, 16384, 0));
    printf("cu_reg_b=%d\n", cuMemHostRegister_v2(b, 16384, 0));
    printf("cu_reg_a_same=%d\n", cuMemHostRegister_v2(a, 16384, 0));
    printf("cu_unreg_a=%d\n", cuMemHostUnregister(a));
    printf("hip_reg_b_same=%d\n", hreg(b, 16384, 0));
    printf("hip_unreg_b=%d\n", hunreg(b));
    printf("cu_unreg_b=%d\n", cuMemHostUnregister(b));
    printf("hip_unreg_a=%d\n", hunreg(a));
    printf("hip_unreg_a_via_cu=%d\n", cuMemHostUnregister(a));
    printf("munmap=%d\n", munmap(a, 65536));
    return 0;
}
