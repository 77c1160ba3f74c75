/* register through dlvsym (versioned, bypassing preload), unregister through the plain symbol */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include "hip_check.h"
#include "simhip.h"
typedef hipError_t (*reg_t)(void *, size_t, unsigned);
typedef hipError_t (*unreg_t)(void *);
int main(void)
{
    void *h = getenv("DEFAULT_HANDLE") ? RTLD_DEFAULT : dlopen("libamdhip64.so.5", RTLD_NOW | RTLD_NOLOAD);
    if (!h) h = dlopen("libamdhip64.so", RTLD_NOW);
    reg_t r = (reg_t)dlvsym(h, "hipHostRegister", "hip_4.2");
    unreg_t u = (unreg_t)dlvsym(h, "hipHostUnregister", "hip_4.2");
    char *p = aligned_alloc(4096, 65536);
    hipError_t e1 = r(p, 65536, 0);
    hipError_t e2 = hipHostUnregister(p);
    hipError_t e3 = hipHostRegister(p, 65536, 0);
    hipError_t e4 = u(p);
    hipError_t e5 = hipHostUnregister(p);
    printf("%d %d %d %d %d\n", e1, e2, e3, e4, e5);
    free(p);
    return 0;
}
