/*
 * gpu_api.h - the few GPU operations the hazard and bench programs need,
 * with two implementations: gpu_rt.cu (the CUDA runtime: built with nvcc,
 * static or shared cudart) and gpu_drv.c (the driver API, linked with
 * -lcuda). The programs are written once against this header, so the same
 * hazard is shown through every path a real program reaches the driver by.
 *
 * Every function returns the API's own error code (0: success); the codes
 * these tests look at (1, 712, 713, 800, 900, 901) are the same number in
 * both APIs.
 */
#ifndef GPU_API_H
#define GPU_API_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef void *gstream; /* cudaStream_t or CUstream */

const char *gpu_api_name(void);   /* "cudart-static", "cudart-shared", "driver" */
const char *gpu_err_name(int err);
int gpu_init(void);
/* Several devices: how many, and which one the calling thread's next calls
 * go to (every thread starts on device 0). */
int gpu_device_count(int *n);
int gpu_set_device(int dev);
/* The calling thread's per-thread default stream (cudaStreamPerThread and
 * CU_STREAM_PER_THREAD are the same handle) on its current device. */
#define GPU_STREAM_PER_THREAD ((gstream)0x2)
int gpu_stream_create(gstream *s, int nonblocking);
int gpu_stream_destroy(gstream s);
int gpu_stream_sync(gstream s);
int gpu_device_sync(void);
int gpu_malloc(void **dev, size_t n);
int gpu_free(void *dev);
int gpu_host_register(void *p, size_t n, int mapped);
/* Portable and mapped (cudaHostRegisterPortable | Mapped): every device
 * reaches it through its device address. */
int gpu_host_register_portable(void *p, size_t n);
int gpu_host_unregister(void *p);
int gpu_host_dev_ptr(void **dev, void *host);
int gpu_htod_async(void *dev, const void *host, size_t n, gstream s);
int gpu_dtoh_async(void *host, const void *dev, size_t n, gstream s);
/* Kernels (kernels.cu). spin_ms: how long the kernel holds its stream
 * before it touches memory. */
int gpu_spin(gstream s, double ms);
int gpu_fill(gstream s, int *dev, size_t n, int seed, double spin_ms);
int gpu_add(gstream s, int *dev, size_t n, int add, double spin_ms);
/* done: device address of a mapped int the kernel sets non-zero at its end. */
int gpu_touch_spin(gstream s, const void *dev, double ms, int *done);
int gpu_host_func(gstream s, void (*fn)(void *), void *arg);
/* global: 1 for the global capture mode, 0 for thread-local. */
int gpu_begin_capture(gstream s, int global);
/* End the capture; on success instantiate the graph, launch it on s, and
 * wait for it. Returns the end-capture's code (or the first later error). */
int gpu_end_capture_run(gstream s);

#ifdef __cplusplus
}
#endif
#endif
