/*
 * simhip.h (GPU build) - the simulated device's kernel extension, in its GPU
 * form, so that the legacy programs' HIP sources run on an NVIDIA GPU
 * unchanged.
 *
 * On simhip a "kernel" is a C function run on the stream's thread. Here the
 * launch names the kernel (the macro stringizes the function's name) and
 * simhip_gpu.cu launches the real kernel of that name with the same
 * argument block (legacy.h's add_kernel and fill_kernel: struct kargs,
 * including work_us, the time the kernel computes before it touches memory).
 * SIMHIP_OP_DELAY_US=N puts a spin kernel of N us ahead of every device
 * operation, the GPU form of simhip's op delay.
 */
#ifndef SIMHIP_H
#define SIMHIP_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <hip/hip_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*simhipKernel_t)(void *args);

hipError_t simhip_gpu_launch(hipStream_t stream, const char *kernel, void *args);

#define simhipLaunchKernel(stream, fn, args) ((void)(fn), simhip_gpu_launch((stream), #fn, (args)))

/* Only the C kernels call these, and on the GPU build those never run. */
static inline void simhipDeviceRead(void *dst, const void *src, size_t n)
{
    (void)dst, (void)src, (void)n;
    fprintf(stderr, "simhip (GPU build): a C kernel ran on the host\n");
    abort();
}

static inline void simhipDeviceWrite(void *dst, const void *src, size_t n)
{
    simhipDeviceRead(dst, src, n);
}

#ifdef __cplusplus
}
#endif
#endif
