/*
 * self_call.c - a program linked with a library (rt/libselfcall.so) that
 * defines cudaHostUnregister and calls it itself through its exported
 * symbol, with no CUDA runtime loaded. Both calls must reach that library's
 * definition (its answers are 1 and 2).
 */
#include "legacy_cuda.h"

int selfcall_twice(void *p);
extern int selfcall_calls;

int main(void)
{
    int x = 0;
    int sum = selfcall_twice(&x);
    if (sum != 3 || selfcall_calls != 2) {
        fprintf(stderr, "the library's own cudaHostUnregister answered %d in all after %d calls "
                "(want 3 after 2)\n", sum, selfcall_calls);
        return 1;
    }
    printf("OK\n");
    return 0;
}
