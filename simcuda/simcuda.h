/*
 * simcuda.h - the simulated CUDA driver's extension API: C "kernels" on a
 * CUstream and checked device accesses inside them, as simhip.h is for
 * HIP. Every access is checked when the kernel executes; an address no
 * registration, cuMemHostAlloc or cuMemAlloc covers makes the device fault
 * (fault line + abort). Pages of a registration that the process freed or
 * unmapped stay pinned: the device reads and writes those, silently.
 *
 * Looked up at run time (dlsym), so a program using this header runs
 * unchanged on a driver without them (simcudaLaunchKernel then returns
 * CUDA_ERROR_NOT_SUPPORTED).
 */
#ifndef SIMCUDA_H
#define SIMCUDA_H

#include <dlfcn.h>
#include <stddef.h>

#include "cuda_min.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A kernel: runs on the stream's worker thread, in stream order. */
typedef void (*simcudaKernel_t)(void *args);

/* The body of a module's kernel (a PTX .entry) in C: a library named in
 * SIMCUDA_KERNELS that defines
 *     void simcuda_kernel_<entry>(const simcudaLaunch *l);
 * gives cuLaunchKernel of that entry this body. It runs once per launch, on
 * the stream's worker, with the grid and block and a pointer to a copy of
 * each argument (taken at launch), and reaches memory through
 * simcudaDeviceRead / simcudaDeviceWrite. Without one a launch is an opaque
 * device operation that touches no host memory. */
typedef struct simcudaLaunch {
    unsigned grid[3], block[3];
    void **params;
} simcudaLaunch;
typedef void (*simcudaKernelImpl)(const simcudaLaunch *l);

typedef CUresult (*simcuda_launch_fn)(CUstream, simcudaKernel_t, void *);
typedef void (*simcuda_access_fn)(void *, const void *, size_t);
typedef void (*simcuda_lock_state_fn)(int *, int *);

/* Enqueue fn(args) on stream (NULL and CU_STREAM_LEGACY: the legacy
 * stream; CU_STREAM_PER_THREAD; a created stream). SIMHIP_OP_DELAY_US
 * delays it like any device operation. During capture it becomes a node. */
static inline CUresult simcudaLaunchKernel(CUstream stream, simcudaKernel_t fn, void *args)
{
    simcuda_launch_fn f = (simcuda_launch_fn)dlsym(RTLD_DEFAULT, "simcuda_launch_kernel");
    return f ? f(stream, fn, args) : CUDA_ERROR_NOT_SUPPORTED;
}

/* Inside a kernel: n bytes from device address src to local dst. */
static inline void simcudaDeviceRead(void *dst, const void *src, size_t n)
{
    simcuda_access_fn f = (simcuda_access_fn)dlsym(RTLD_DEFAULT, "simcuda_device_read");
    if (f)
        f(dst, src, n);
}

/* Inside a kernel: n bytes from local src to device address dst. */
static inline void simcudaDeviceWrite(void *dst, const void *src, size_t n)
{
    simcuda_access_fn f = (simcuda_access_fn)dlsym(RTLD_DEFAULT, "simcuda_device_write");
    if (f)
        f(dst, src, n);
}

/* Test hook: whether the driver lock is held (an unregister or free waits
 * for the device under it) and how many calls wait to pass it. Returns
 * -1 in both on a driver without the hook. */
static inline void simcudaDriverLockState(int *held, int *waiting)
{
    simcuda_lock_state_fn f =
        (simcuda_lock_state_fn)dlsym(RTLD_DEFAULT, "simcuda_driver_lock_state");
    if (f) {
        f(held, waiting);
    } else {
        *held = -1;
        *waiting = -1;
    }
}

#ifdef __cplusplus
}
#endif
#endif /* SIMCUDA_H */
