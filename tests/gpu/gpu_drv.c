/*
 * gpu_drv.c - gpu_api.h on the CUDA driver API, as a program linked with
 * -lcuda calls it (through the PLT, to libcuda's exported symbols). The
 * kernels are kernels.cu's, loaded by name from the fatbin that the build
 * embeds (kernels_fatbin.h, made by bin2c).
 */
#include <cuda.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "gpu_api.h"
#include "kernels_fatbin.h"

#define MAX_DEV 16

/* Per device: its primary context and the kernels loaded into it. Opened
 * once, on the first gpu_set_device to it (device 0: gpu_init). */
static struct {
    CUcontext ctx;
    CUfunction spin, fill, add, touch;
} devs[MAX_DEV];
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local int tl_dev; /* the calling thread's device */

static unsigned long long ms_to_ns(double ms) { return (unsigned long long)(ms * 1e6); }

const char *gpu_api_name(void) { return "driver"; }

const char *gpu_err_name(int err)
{
    const char *s = NULL;
    cuGetErrorName((CUresult)err, &s);
    return s ? s : "?";
}

static int open_device(int d)
{
    CUdevice dev;
    CUmodule mod;
    CUcontext ctx;
    if (d < 0 || d >= MAX_DEV)
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&open_lock);
    int e = devs[d].ctx ? CUDA_SUCCESS : cuDeviceGet(&dev, d);
    if (devs[d].ctx || e)
        goto out;
    e = cuDevicePrimaryCtxRetain(&ctx, dev);
    if (!e)
        e = cuCtxSetCurrent(ctx);
    /* The image must be aligned as the driver reads it (bin2c's array
     * is not). */
    void *img = aligned_alloc(64, (sizeof gt_fatbin + 63) / 64 * 64);
    if (!img) {
        e = CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    memcpy(img, gt_fatbin, sizeof gt_fatbin);
    if (!e)
        e = cuModuleLoadData(&mod, img);
    if (!e)
        e = cuModuleGetFunction(&devs[d].spin, mod, "gt_spin");
    if (!e)
        e = cuModuleGetFunction(&devs[d].fill, mod, "gt_fill");
    if (!e)
        e = cuModuleGetFunction(&devs[d].add, mod, "gt_add");
    if (!e)
        e = cuModuleGetFunction(&devs[d].touch, mod, "gt_touch_spin");
    if (!e)
        devs[d].ctx = ctx;
out:
    pthread_mutex_unlock(&open_lock);
    return e;
}

int gpu_init(void)
{
    int e = cuInit(0);
    return e ? e : open_device(0);
}

int gpu_device_count(int *n) { return cuDeviceGetCount(n); }

int gpu_set_device(int d)
{
    int e = open_device(d);
    if (e)
        return e;
    tl_dev = d;
    return cuCtxSetCurrent(devs[d].ctx);
}

/* Threads make their device's context current before each call (the
 * runtime does this implicitly; a driver-API program must). */
static void cur(void)
{
    CUcontext c = NULL;
    if (cuCtxGetCurrent(&c) == CUDA_SUCCESS && c != devs[tl_dev].ctx)
        cuCtxSetCurrent(devs[tl_dev].ctx);
}

int gpu_stream_create(gstream *s, int nonblocking)
{
    CUstream st;
    cur();
    int e = cuStreamCreate(&st, nonblocking ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT);
    if (!e)
        *s = (gstream)st;
    return e;
}

int gpu_stream_destroy(gstream s) { cur(); return cuStreamDestroy((CUstream)s); }
int gpu_stream_sync(gstream s) { cur(); return cuStreamSynchronize((CUstream)s); }
int gpu_device_sync(void) { cur(); return cuCtxSynchronize(); }

int gpu_malloc(void **dev, size_t n)
{
    CUdeviceptr d;
    cur();
    int e = cuMemAlloc(&d, n);
    if (!e)
        *dev = (void *)(uintptr_t)d;
    return e;
}

int gpu_free(void *dev) { cur(); return cuMemFree((CUdeviceptr)(uintptr_t)dev); }

int gpu_host_register(void *p, size_t n, int mapped)
{
    cur();
    return cuMemHostRegister(p, n, mapped ? CU_MEMHOSTREGISTER_DEVICEMAP : 0);
}

int gpu_host_register_portable(void *p, size_t n)
{
    cur();
    return cuMemHostRegister(p, n, CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP);
}

int gpu_host_unregister(void *p) { cur(); return cuMemHostUnregister(p); }

int gpu_host_dev_ptr(void **dev, void *host)
{
    CUdeviceptr d;
    cur();
    int e = cuMemHostGetDevicePointer(&d, host, 0);
    if (!e)
        *dev = (void *)(uintptr_t)d;
    return e;
}

int gpu_htod_async(void *dev, const void *host, size_t n, gstream s)
{
    cur();
    return cuMemcpyHtoDAsync((CUdeviceptr)(uintptr_t)dev, host, n, (CUstream)s);
}

int gpu_dtoh_async(void *host, const void *dev, size_t n, gstream s)
{
    cur();
    return cuMemcpyDtoHAsync(host, (CUdeviceptr)(uintptr_t)dev, n, (CUstream)s);
}

static int launch(CUfunction f, unsigned threads, gstream s, void **args)
{
    cur();
    return cuLaunchKernel(f, 1, 1, 1, threads, 1, 1, 0, (CUstream)s, args, NULL);
}

int gpu_spin(gstream s, double ms)
{
    unsigned long long ns = ms_to_ns(ms);
    void *a[] = { &ns };
    return launch(devs[tl_dev].spin, 1, s, a);
}

int gpu_fill(gstream s, int *dev, size_t n, int seed, double spin_ms)
{
    unsigned long long ns = ms_to_ns(spin_ms);
    size_t first = 0;
    void *a[] = { &dev, &n, &first, &seed, &ns };
    return launch(devs[tl_dev].fill, 256, s, a);
}

int gpu_add(gstream s, int *dev, size_t n, int add, double spin_ms)
{
    unsigned long long ns = ms_to_ns(spin_ms);
    void *a[] = { &dev, &n, &add, &ns };
    return launch(devs[tl_dev].add, 256, s, a);
}

int gpu_touch_spin(gstream s, const void *dev, double ms, int *done)
{
    unsigned long long ns = ms_to_ns(ms);
    void *a[] = { &dev, &ns, &done };
    return launch(devs[tl_dev].touch, 1, s, a);
}

int gpu_host_func(gstream s, void (*fn)(void *), void *arg)
{
    cur();
    return cuLaunchHostFunc((CUstream)s, fn, arg);
}

int gpu_begin_capture(gstream s, int global)
{
    cur();
    return cuStreamBeginCapture((CUstream)s, global ? CU_STREAM_CAPTURE_MODE_GLOBAL
                                                    : CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
}

int gpu_end_capture_run(gstream s)
{
    CUgraph g = NULL;
    CUgraphExec ge = NULL;
    cur();
    int e = cuStreamEndCapture((CUstream)s, &g);
    if (e)
        return e;
    e = cuGraphInstantiate(&ge, g, 0);
    if (!e)
        e = cuGraphLaunch(ge, (CUstream)s);
    if (!e)
        e = cuStreamSynchronize((CUstream)s);
    if (ge)
        cuGraphExecDestroy(ge);
    cuGraphDestroy(g);
    return e;
}
