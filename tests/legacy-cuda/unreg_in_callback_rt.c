/*
 * unreg_in_callback_rt.c - unreg_in_callback through a runtime layer built
 * the way NVIDIA's runtime reaches the driver (CUDA-NOTES.md, traced on the
 * H200): it dlopens libcuda.so.1, takes every entry point from
 * cuGetProcAddress_v2, and asks cuCtxGetCurrent, cuCtxGetApiVersion and
 * cuCtxGetDevice_v2 before each call, returning their error. In a host function the driver
 * answers 800 to cuCtxGetCurrent already, so rt_host_unregister returns 800
 * without ever reaching cuMemHostUnregister, the buffer stays pinned and the next batch's
 * register fails with 712.
 */
#include <dlfcn.h>

#include "legacy_cuda.h"

#define N (64 * 1024)
#define BATCHES 4

typedef CUresult (*gpa_t)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

static struct {
    CUresult (*ctx_get)(CUcontext *);
    CUresult (*api_version)(CUcontext, unsigned int *);
    CUresult (*ctx_device)(CUdevice *, CUcontext);
    CUresult (*reg)(void *, size_t, unsigned int);
    CUresult (*unreg)(void *);
    CUresult (*host_fn)(CUstream, CUhostFn, void *);
} rt;

static void *entry(gpa_t gpa, const char *name, int version)
{
    void *fn = NULL;
    CUdriverProcAddressQueryResult st;
    if (gpa(name, &fn, version, 0, &st) != CUDA_SUCCESS || !fn) {
        fprintf(stderr, "no driver entry point %s\n", name);
        exit(2);
    }
    return fn;
}

static void rt_init(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    gpa_t gpa = h ? (gpa_t)dlsym(h, "cuGetProcAddress_v2") : NULL;
    if (!gpa) {
        fprintf(stderr, "no cuGetProcAddress_v2\n");
        exit(2);
    }
    rt.ctx_get = (CUresult(*)(CUcontext *))entry(gpa, "cuCtxGetCurrent", 4000);
    rt.api_version = (CUresult(*)(CUcontext, unsigned int *))entry(gpa, "cuCtxGetApiVersion", 3020);
    rt.ctx_device = (CUresult(*)(CUdevice *, CUcontext))entry(gpa, "cuCtxGetDevice", 13000);
    rt.reg = (CUresult(*)(void *, size_t, unsigned int))entry(gpa, "cuMemHostRegister", 6050);
    rt.unreg = (CUresult(*)(void *))entry(gpa, "cuMemHostUnregister", 4000);
    rt.host_fn = (CUresult(*)(CUstream, CUhostFn, void *))entry(gpa, "cuLaunchHostFunc", 10000);
}

/* The runtime's prologue: the calling thread's context, its API version
 * and device, or the error. */
static CUresult rt_enter(void)
{
    CUcontext c = NULL;
    unsigned int v = 0;
    CUdevice dev = -1;
    CUresult e = rt.ctx_get(&c);
    if (e == CUDA_SUCCESS && !c)
        e = CUDA_ERROR_INVALID_CONTEXT;
    if (e == CUDA_SUCCESS)
        e = rt.api_version(c, &v);
    if (e == CUDA_SUCCESS && v < 3020)
        e = CUDA_ERROR_INVALID_CONTEXT;
    if (e == CUDA_SUCCESS)
        e = rt.ctx_device(&dev, NULL);
    if (e == CUDA_SUCCESS && dev < 0)
        e = CUDA_ERROR_INVALID_DEVICE;
    return e;
}

static CUresult rt_host_register(void *p, size_t n)
{
    CUresult e = rt_enter();
    return e != CUDA_SUCCESS ? e : rt.reg(p, n, 0);
}

static CUresult rt_host_unregister(void *p)
{
    CUresult e = rt_enter();
    return e != CUDA_SUCCESS ? e : rt.unreg(p);
}

static CUresult rt_launch_host_func(CUstream s, CUhostFn fn, void *ud)
{
    CUresult e = rt_enter();
    return e != CUDA_SUCCESS ? e : rt.host_fn(s, fn, ud);
}

static int staging[N];
static CUresult in_callback = CUDA_SUCCESS;

static void unpin(void *p)
{
    CUresult r = rt_host_unregister(p);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "rt_host_unregister in a host function returned %s (%d)\n", lc_name(r),
                (int)r);
        in_callback = r;
    }
}

int main(void)
{
    lc_init();
    rt_init();
    CUstream s;
    CUdeviceptr d;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CHECK(cuMemAlloc_v2(&d, sizeof staging));
    int *out;
    CHECK(cuMemHostAlloc((void **)&out, sizeof staging, 0));
    for (int b = 0; b < BATCHES; b++) {
        for (int i = 0; i < N; i++)
            staging[i] = lc_pattern((size_t)i, b);
        CHECK(rt_host_register(staging, sizeof staging));
        CHECK(cuMemcpyHtoDAsync_v2(d, staging, sizeof staging, s));
        CHECK(rt_launch_host_func(s, unpin, staging));
        CHECK(cuMemcpyDtoHAsync_v2(out, d, sizeof staging, s));
        CHECK(cuStreamSynchronize(s));
        if (!lc_verify("batch", out, N, b))
            return 1;
    }
    CHECK(cuMemFreeHost(out));
    CHECK(cuMemFree_v2(d));
    CHECK(cuStreamDestroy_v2(s));
    if (in_callback != CUDA_SUCCESS)
        return 1;
    printf("OK\n");
    return 0;
}
