/*
 * torch_cuda_standin.c - a stand-in for PyTorch's libtorch_cuda.so, built
 * under that name (build/tests/diag/supp/torch/libtorch_cuda.so): its
 * caching host allocator registers a block through a runtime's frames
 * (libsuppholder_hip.so's supp_via_runtime, as libcudart's stand above
 * cuMemHostRegister_v2) and keeps it until exit. The shipped default
 * suppressions name it twice: by module (libtorch_cuda.so) and by function
 * (*CachingHostAllocator*, here a static function: addr2line names it,
 * dladdr does not). tests/diag/suppressions.sh.
 */
#include <stdlib.h>

int supp_via_runtime(void *p, size_t size);

/* static: not exported, as PyTorch's is in an anonymous namespace. */
__attribute__((noinline)) static void *CUDACachingHostAllocatorImpl_allocate_slowpath(size_t size)
{
    void *p = malloc(size);
    if (p && supp_via_runtime(p, size) != 0) {
        free(p);
        p = NULL;
    }
    __asm__ volatile("" ::: "memory"); /* no tail call: this frame stays */
    return p;
}

/* What the program calls (at::native::_pin_memory's part). */
__attribute__((noinline)) void *torch_standin_pin(size_t size)
{
    void *p = CUDACachingHostAllocatorImpl_allocate_slowpath(size);
    __asm__ volatile("" ::: "memory");
    return p;
}
