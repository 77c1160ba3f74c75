/*
 * runtime_reload.c - a program that loads the shared runtime as ctypes does
 * (dlopen RTLD_LOCAL, functions from dlsym on the handle), unpins a buffer,
 * closes the runtime, loads another library (the other runtime major) and
 * then the runtime again, and unpins once more. Each cudaHostUnregister must
 * reach the runtime loaded at the time of the call, never code that was
 * unloaded (or whatever object now sits where it was).
 */
#include <dlfcn.h>

#include "legacy_cuda.h"

#define PAGE 4096

typedef int (*reg_fn)(void *, size_t, unsigned int);
typedef int (*unreg_fn)(void *);

static void *need(void *h, const char *name)
{
    void *p = h ? dlsym(h, name) : NULL;
    if (!p) {
        fprintf(stderr, "no %s: %s\n", name, dlerror());
        exit(2);
    }
    return p;
}

/* Load the runtime, pin and unpin a through it; 1 if that load answered. */
static int round_trip(void **handle, char *a)
{
    void *h = lc_dlopen_rt("libcudart.so.13", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "dlopen libcudart.so.13: %s\n", dlerror());
        exit(2);
    }
    reg_fn reg = (reg_fn)need(h, "cudaHostRegister");
    unreg_fn unreg = (unreg_fn)need(h, "cudaHostUnregister");
    int *calls = (int *)need(h, "minirt_unregister_calls_13");
    CHECK((CUresult)reg(a, PAGE, 0));
    CHECK((CUresult)unreg(a));
    *handle = h;
    if (*calls != 1) {
        fprintf(stderr, "cudaHostUnregister did not reach the runtime loaded now (it counted %d calls, "
                "want 1)\n", *calls);
        return 0;
    }
    return 1;
}

int main(void)
{
    static char a[PAGE] __attribute__((aligned(PAGE)));
    void *h;
    lc_init();
    if (!round_trip(&h, a))
        return 1;
    if (dlclose(h) != 0) {
        fprintf(stderr, "dlclose: %s\n", dlerror());
        return 2;
    }
    /* Another library where the runtime was (the loader reuses the space). */
    void *other = lc_dlopen_rt("libcudart.so.12", RTLD_NOW | RTLD_LOCAL);
    if (!other) {
        fprintf(stderr, "dlopen libcudart.so.12: %s\n", dlerror());
        return 2;
    }
    if (!round_trip(&h, a))
        return 1;
    int *other_calls = (int *)need(other, "minirt_unregister_calls_12");
    if (*other_calls != 0) {
        fprintf(stderr, "the library loaded where the closed runtime was answered %d calls\n", *other_calls);
        return 1;
    }
    printf("OK\n");
    return 0;
}
