/*
 * minirt.c - the stand-in runtime of minirt.h. Built as libcudart.so.13 and
 * (MINIRT_MAJOR=12) libcudart.so.12, each with its own version node as
 * NVIDIA's are; MINIRT_CALLS counts its cudaHostUnregister calls, so a test
 * can tell which runtime answered.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "minirt.h"

typedef CUresult (*gpa_t)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

#ifndef MINIRT_MAJOR
#define MINIRT_MAJOR 13
#endif
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define MINIRT_CALLS CAT(minirt_unregister_calls_, MINIRT_MAJOR)
int MINIRT_CALLS;

static struct {
    CUresult (*ctx_get)(CUcontext *);
    CUresult (*api_version)(CUcontext, unsigned int *);
    CUresult (*ctx_device)(CUdevice *, CUcontext);
    CUresult (*reg)(void *, size_t, unsigned int);
    CUresult (*unreg)(void *);
    CUresult (*host_fn)(CUstream, CUhostFn, void *);
} drv;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int ready;

static void *entry(gpa_t gpa, const char *name, int version)
{
    void *fn = NULL;
    CUdriverProcAddressQueryResult st;
    if (gpa(name, &fn, version, 0, &st) != CUDA_SUCCESS)
        return NULL;
    return fn;
}

static void load(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    gpa_t gpa = h ? (gpa_t)dlsym(h, "cuGetProcAddress_v2") : NULL;
    if (!gpa)
        return;
    drv.ctx_get = (CUresult(*)(CUcontext *))entry(gpa, "cuCtxGetCurrent", 4000);
    drv.api_version = (CUresult(*)(CUcontext, unsigned int *))entry(gpa, "cuCtxGetApiVersion", 3020);
    drv.ctx_device = (CUresult(*)(CUdevice *, CUcontext))entry(gpa, "cuCtxGetDevice", 13000);
    drv.reg = (CUresult(*)(void *, size_t, unsigned int))entry(gpa, "cuMemHostRegister", 6050);
    drv.unreg = (CUresult(*)(void *))entry(gpa, "cuMemHostUnregister", 4000);
    drv.host_fn = (CUresult(*)(CUstream, CUhostFn, void *))entry(gpa, "cuLaunchHostFunc", 10000);
    ready = drv.ctx_get && drv.api_version && drv.ctx_device && drv.reg && drv.unreg && drv.host_fn;
}

/* The prologue of every call: the current context, its API version and its
 * device, or the driver's error. */
static int enter(void)
{
    pthread_once(&once, load);
    if (!ready)
        return 3; /* cudaErrorInitializationError */
    CUcontext c = NULL;
    unsigned int v = 0;
    CUdevice d = -1;
    CUresult e = drv.ctx_get(&c);
    if (e == CUDA_SUCCESS && !c)
        e = CUDA_ERROR_INVALID_CONTEXT;
    if (e == CUDA_SUCCESS)
        e = drv.api_version(c, &v);
    if (e == CUDA_SUCCESS)
        e = drv.ctx_device(&d, c);
    return (int)e;
}

int cudaHostRegister(void *p, size_t n, unsigned int flags)
{
    int e = enter();
    return e ? e : (int)drv.reg(p, n, flags);
}

int cudaHostUnregister(void *p)
{
    __atomic_add_fetch(&MINIRT_CALLS, 1, __ATOMIC_RELAXED);
    int e = enter();
    return e ? e : (int)drv.unreg(p);
}

int cudaLaunchHostFunc(CUstream s, CUhostFn fn, void *ud)
{
    int e = enter();
    return e ? e : (int)drv.host_fn(s, fn, ud);
}
