/*
 * holder_cuda.c - libsuppholder_cuda.so: the CUDA face of holder_hip.c, a
 * library that pins host memory and keeps it pinned until the process ends.
 */
#include <stdlib.h>
#include "simcuda.h"

__attribute__((noinline)) void *supp_holder_keep_cu(size_t size)
{
    void *p = malloc(size);
    if (p && cuMemHostRegister_v2(p, size, 0) != CUDA_SUCCESS) {
        free(p);
        return NULL;
    }
    return p;
}
