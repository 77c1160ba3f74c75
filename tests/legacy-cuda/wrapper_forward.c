/*
 * wrapper_forward.c - a program linked with a wrapper library that defines
 * cudaHostUnregister (rt/libwrap.so, as API tracers do) ahead of the shared
 * runtime: the wrapper counts the call and forwards it to the function it
 * takes with dlsym on the runtime's handle. Each unpin must pass the wrapper
 * once and reach the runtime once, and return the runtime's answer.
 */
#include <dlfcn.h>

#include "legacy_cuda.h"
#include "minirt.h"

#define PAGE 4096

extern int wrap_calls;

int main(void)
{
    static char a[PAGE] __attribute__((aligned(PAGE)));
    lc_init();
    void *rt = dlopen("libcudart.so.13", RTLD_NOW | RTLD_NOLOAD);
    int *rt_calls = rt ? (int *)dlsym(rt, "minirt_unregister_calls_13") : NULL;
    if (!rt_calls) {
        fprintf(stderr, "no stand-in runtime: %s\n", dlerror());
        return 2;
    }
    CHECK((CUresult)cudaHostRegister(a, PAGE, 0));
    CHECK((CUresult)cudaHostUnregister(a));
    int again = cudaHostUnregister(a);
    if (again != CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED || wrap_calls != 2 || *rt_calls != 2) {
        fprintf(stderr, "a second cudaHostUnregister returned %d, the wrapper saw %d calls and the "
                "runtime %d (want 713, 2 and 2)\n", again, wrap_calls, *rt_calls);
        return 1;
    }
    printf("OK\n");
    return 0;
}
