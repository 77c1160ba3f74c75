/*
 * reload.c - one source, built twice (libreload_a.so, libreload_b.so) with
 * a different function name each: diag_codes "reload" loads one, unloads
 * it, and loads the other where it was, each making a double unregister
 * from its own code.
 */
#include <hip/hip_runtime_api.h>

#define NAME2(a, b) a##b
#define NAME(a, b) NAME2(a, b)

/* (The volatile keeps each call a call, not a jump: the frame stays.) */
__attribute__((noinline)) int NAME(unregister_in_, WHO)(void *p)
{
    volatile int e = (int)hipHostUnregister(p);
    return e;
}

int entry(void *p)
{
    volatile int e = NAME(unregister_in_, WHO)(p);
    return e;
}
