/*
 * holder_hip.c - libsuppholder_hip.so: a library that registers host memory
 * and keeps it registered until the process ends, as a caching pinned
 * allocator does (tests/diag/suppressions.sh).
 */
#include <stdlib.h>
#include <hip/hip_runtime_api.h>

/* noinline, exported: its frame and name are what suppressions match. */
__attribute__((noinline)) void *supp_holder_keep(size_t size)
{
    void *p = malloc(size);
    if (p && hipHostRegister(p, size, 0) != hipSuccess) {
        free(p);
        return NULL;
    }
    return p;
}

/* The same under a name the shipped default suppressions match
 * (*CachingHostAllocator*), from a module they do not name. */
__attribute__((noinline)) void *fake_CachingHostAllocator_allocate(size_t size)
{
    void *p = malloc(size);
    if (p && hipHostRegister(p, size, 0) != hipSuccess) {
        free(p);
        return NULL;
    }
    return p;
}
