/*
 * gpu_rt.cu - gpu_api.h on the CUDA runtime API (cudart), as an nvcc-built
 * program calls it. Built twice: with nvcc's default static cudart and with
 * -cudart shared (GPU_API_NAME names which).
 */
#include <cuda_runtime.h>
#include "gpu_api.h"

#ifndef GPU_API_NAME
#define GPU_API_NAME "cudart"
#endif

extern "C" __global__ void gt_spin(unsigned long long ns);
extern "C" __global__ void gt_fill(int *dev, size_t n, size_t first, int seed,
                                   unsigned long long spin);
extern "C" __global__ void gt_add(int *dev, size_t n, int add, unsigned long long spin);
extern "C" __global__ void gt_touch_spin(const char *dev, unsigned long long ns, int *done);

static unsigned long long ms_to_ns(double ms) { return (unsigned long long)(ms * 1e6); }

/* cudaGetLastError after a launch reports the launch, but it also returns an
 * earlier call's failure (a 712 the program saw and handled): clear that
 * first. */
static void clear_last_error(void) { (void)cudaGetLastError(); }

extern "C" {

const char *gpu_api_name(void) { return GPU_API_NAME; }
const char *gpu_err_name(int err) { return cudaGetErrorName((cudaError_t)err); }
int gpu_init(void) { return (int)cudaFree(0); }
int gpu_device_count(int *n) { return (int)cudaGetDeviceCount(n); }
int gpu_set_device(int dev) { return (int)cudaSetDevice(dev); }

int gpu_stream_create(gstream *s, int nonblocking)
{
    cudaStream_t st;
    int e = (int)cudaStreamCreateWithFlags(&st, nonblocking ? cudaStreamNonBlocking
                                                            : cudaStreamDefault);
    if (e == 0)
        *s = (gstream)st;
    return e;
}

int gpu_stream_destroy(gstream s) { return (int)cudaStreamDestroy((cudaStream_t)s); }
int gpu_stream_sync(gstream s) { return (int)cudaStreamSynchronize((cudaStream_t)s); }
int gpu_device_sync(void) { return (int)cudaDeviceSynchronize(); }
int gpu_malloc(void **dev, size_t n) { return (int)cudaMalloc(dev, n); }
int gpu_free(void *dev) { return (int)cudaFree(dev); }

int gpu_host_register(void *p, size_t n, int mapped)
{
    return (int)cudaHostRegister(p, n, mapped ? cudaHostRegisterMapped : cudaHostRegisterDefault);
}

int gpu_host_register_portable(void *p, size_t n)
{
    return (int)cudaHostRegister(p, n, cudaHostRegisterPortable | cudaHostRegisterMapped);
}

int gpu_host_unregister(void *p) { return (int)cudaHostUnregister(p); }
int gpu_host_dev_ptr(void **dev, void *host) { return (int)cudaHostGetDevicePointer(dev, host, 0); }

int gpu_htod_async(void *dev, const void *host, size_t n, gstream s)
{
    return (int)cudaMemcpyAsync(dev, host, n, cudaMemcpyHostToDevice, (cudaStream_t)s);
}

int gpu_dtoh_async(void *host, const void *dev, size_t n, gstream s)
{
    return (int)cudaMemcpyAsync(host, dev, n, cudaMemcpyDeviceToHost, (cudaStream_t)s);
}

int gpu_spin(gstream s, double ms)
{
    clear_last_error();
    gt_spin<<<1, 1, 0, (cudaStream_t)s>>>(ms_to_ns(ms));
    return (int)cudaGetLastError();
}

int gpu_fill(gstream s, int *dev, size_t n, int seed, double spin_ms)
{
    clear_last_error();
    gt_fill<<<1, 256, 0, (cudaStream_t)s>>>(dev, n, 0, seed, ms_to_ns(spin_ms));
    return (int)cudaGetLastError();
}

int gpu_add(gstream s, int *dev, size_t n, int add, double spin_ms)
{
    clear_last_error();
    gt_add<<<1, 256, 0, (cudaStream_t)s>>>(dev, n, add, ms_to_ns(spin_ms));
    return (int)cudaGetLastError();
}

int gpu_touch_spin(gstream s, const void *dev, double ms, int *done)
{
    clear_last_error();
    gt_touch_spin<<<1, 1, 0, (cudaStream_t)s>>>((const char *)dev, ms_to_ns(ms), done);
    return (int)cudaGetLastError();
}

int gpu_host_func(gstream s, void (*fn)(void *), void *arg)
{
    return (int)cudaLaunchHostFunc((cudaStream_t)s, fn, arg);
}

int gpu_begin_capture(gstream s, int global)
{
    return (int)cudaStreamBeginCapture((cudaStream_t)s, global ? cudaStreamCaptureModeGlobal
                                                               : cudaStreamCaptureModeThreadLocal);
}

int gpu_end_capture_run(gstream s)
{
    cudaGraph_t g = NULL;
    cudaGraphExec_t ge = NULL;
    int e = (int)cudaStreamEndCapture((cudaStream_t)s, &g);
    if (e)
        return e;
    e = (int)cudaGraphInstantiate(&ge, g, 0);
    if (!e)
        e = (int)cudaGraphLaunch(ge, (cudaStream_t)s);
    if (!e)
        e = (int)cudaStreamSynchronize((cudaStream_t)s);
    if (ge)
        cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    return e;
}

} /* extern "C" */
