/*
 * simhip_gpu.cu - the GPU side of hipnv/simhip.h: the legacy programs'
 * kernels, launched by name, and the op delay.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime.h>

extern "C" __global__ void gt_spin(unsigned long long ns);
extern "C" __global__ void gt_fill(int *dev, size_t n, size_t first, int seed,
                                   unsigned long long spin);
extern "C" __global__ void gt_add(int *dev, size_t n, int add, unsigned long long spin);

/* legacy.h's argument block, field for field. */
struct kargs {
    int *dev;
    size_t n;
    size_t first;
    int seed;
    int add;
    unsigned work_us;
};

static unsigned long long op_delay_ns(void)
{
    static long long ns = -1;
    if (ns < 0) {
        const char *v = getenv("SIMHIP_OP_DELAY_US");
        ns = v ? atoll(v) * 1000ll : 0;
    }
    return (unsigned long long)ns;
}

extern "C" cudaError_t simhip_gpu_op_delay(cudaStream_t s)
{
    if (!op_delay_ns())
        return cudaSuccess;
    (void)cudaGetLastError(); /* an earlier call's failure is not the launch's */
    gt_spin<<<1, 1, 0, s>>>(op_delay_ns());
    return cudaGetLastError();
}

extern "C" cudaError_t simhip_gpu_launch(cudaStream_t s, const char *kernel, void *args)
{
    const struct kargs *a = (const struct kargs *)args;
    unsigned long long spin = op_delay_ns() + (unsigned long long)a->work_us * 1000ull;
    (void)cudaGetLastError(); /* an earlier call's failure is not the launch's */
    if (strcmp(kernel, "add_kernel") == 0)
        gt_add<<<1, 256, 0, s>>>(a->dev, a->n, a->add, spin);
    else if (strcmp(kernel, "fill_kernel") == 0)
        gt_fill<<<1, 256, 0, s>>>(a->dev, a->n, a->first, a->seed, spin);
    else {
        fprintf(stderr, "simhip (GPU build): no GPU form of kernel %s\n", kernel);
        return cudaErrorNotSupported;
    }
    return cudaGetLastError();
}
