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

/* A runtime's own frames between a library and the register hook, as
 * libcudart's two stand between PyTorch and cuMemHostRegister_v2
 * (tests/diag/supp/torch_cuda_standin.c calls it). */
__attribute__((noinline)) static int via_runtime_inner(void *p, size_t size)
{
    int e = hipHostRegister(p, size, 0);
    __asm__ volatile("" ::: "memory"); /* no tail call: this frame stays */
    return e;
}

__attribute__((noinline)) int supp_via_runtime(void *p, size_t size)
{
    int e = via_runtime_inner(p, size);
    __asm__ volatile("" ::: "memory");
    return e;
}
