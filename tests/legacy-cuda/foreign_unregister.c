/*
 * foreign_unregister.c - a program whose own library (rt/libnotrt.so)
 * defines cudaHostUnregister, with no CUDA runtime loaded: a test double
 * that counts calls and unpins nothing. Calls of it, also from a host
 * function, must reach that library and nothing else: the buffer pinned
 * through the driver stays pinned until the program unpins it.
 */
#include "legacy_cuda.h"

#define PAGE 4096

int cudaHostUnregister(void *p);
extern int notrt_calls;

static int in_host_fn = -1;

static void host_fn(void *p) { in_host_fn = cudaHostUnregister(p); }

int main(void)
{
    static char a[PAGE] __attribute__((aligned(PAGE)));
    CUstream s;
    lc_init();
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CHECK(cuMemHostRegister(a, PAGE, 0));
    CHECK(cuLaunchHostFunc(s, host_fn, a));
    CHECK(cuStreamSynchronize(s));
    if (in_host_fn != 0 || notrt_calls != 1) {
        fprintf(stderr, "cudaHostUnregister in a host function returned %d after %d calls of the "
                "program's own (want 0 after 1)\n", in_host_fn, notrt_calls);
        return 1;
    }
    int again = cudaHostUnregister(a);
    if (again != 99 || notrt_calls != 2) {
        fprintf(stderr, "cudaHostUnregister returned %d after %d calls of the program's own (want 99 "
                "after 2)\n", again, notrt_calls);
        return 1;
    }
    CHECK(cuMemHostUnregister(a)); /* still pinned: the double unpinned nothing */
    CHECK(cuStreamDestroy_v2(s));
    printf("OK\n");
    return 0;
}
