/*
 * vector_add.c - the body of ptx_sample's VecAdd_kernel for simcuda
 * (SIMCUDA_KERNELS): C[i] = A[i] + B[i] for every thread of the grid, each
 * element read and written through checked device accesses, so an input
 * that is not registered (or was unregistered) faults as on a GPU.
 */
#include <stdint.h>

#include "simcuda.h"

void simcuda_kernel_VecAdd_kernel(const simcudaLaunch *l);

void simcuda_kernel_VecAdd_kernel(const simcudaLaunch *l)
{
    const float *a = *(const float *const *)l->params[0];
    const float *b = *(const float *const *)l->params[1];
    float *c = *(float *const *)l->params[2];
    int n = *(const int *)l->params[3];
    long threads = (long)l->grid[0] * l->block[0];
    for (long i = 0; i < threads && i < n; i++) {
        float x, y, z;
        simcudaDeviceRead(&x, a + i, sizeof x);
        simcudaDeviceRead(&y, b + i, sizeof y);
        z = x + y;
        simcudaDeviceWrite(c + i, &z, sizeof z);
    }
}
