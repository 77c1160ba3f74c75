/*
 * kernels.cu - the device code of the GPU tests: a spin kernel (the GPU form
 * of SIMHIP_OP_DELAY_US: it holds its stream for a set time before it
 * touches memory), and fill/add kernels that write through a device address
 * (of a mapped registration or a device allocation).
 *
 * extern "C" and plain arguments, so that the driver-API build can load the
 * same kernels by name from the embedded fatbin (cuModuleGetFunction).
 */
#include <stddef.h>

/* The nanosecond timer of the device (shared by all multiprocessors). */
__device__ static unsigned long long gpu_now_ns(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ static void spin_ns(unsigned long long ns)
{
    unsigned long long t0 = gpu_now_ns();
    while (gpu_now_ns() - t0 < ns)
        ;
}

/* The pattern of the tests: element i of a buffer filled with seed. */
__device__ static int dev_pattern(size_t i, int seed)
{
    return (int)((i * 2654435761u) ^ (unsigned)seed) & 0x3fffffff;
}

extern "C" __global__ void gt_spin(unsigned long long ns)
{
    if (threadIdx.x == 0 && blockIdx.x == 0)
        spin_ns(ns);
}

/* One block of threads, so that the spin happens once, before any store. */
extern "C" __global__ void gt_fill(int *dev, size_t n, size_t first, int seed,
                                   unsigned long long spin)
{
    if (spin) {
        if (threadIdx.x == 0)
            spin_ns(spin);
        __syncthreads();
    }
    for (size_t i = threadIdx.x; i < n; i += blockDim.x)
        dev[i] = dev_pattern(first + i, seed);
}

extern "C" __global__ void gt_add(int *dev, size_t n, int add, unsigned long long spin)
{
    if (spin) {
        if (threadIdx.x == 0)
            spin_ns(spin);
        __syncthreads();
    }
    for (size_t i = threadIdx.x; i < n; i += blockDim.x)
        dev[i] += add;
}

/* Reads one byte of dev (a device access of the range), spins, then, as its
 * last act, stores 1 + that byte into *done (mapped host memory: the host
 * sees the kernel end without asking the driver). */
extern "C" __global__ void gt_touch_spin(const char *dev, unsigned long long ns, int *done)
{
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        char c = dev ? dev[0] : 0;
        spin_ns(ns);
        if (done) {
            *(volatile int *)done = 1 + c;
            __threadfence_system();
        }
    }
}
