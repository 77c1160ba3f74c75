/*
 * cudart_lookup.c - the look-up dance of NVIDIA's runtime (static and
 * shared cudart alike, CUDA-NOTES.md): dlopen("libcuda.so.1"),
 * dlsym(handle, "cuGetProcAddress_v2"), the probe cuGetProcAddress(""),
 * "cuGetProcAddress" asked at 11030 (4 arguments) and 12000 (5), then every
 * entry point by base name, version and flags (2: the per-thread default
 * stream forms) through the 12000 answer. Then the hazard, through the
 * functions obtained.
 */
#include "reach_cuda.h"

typedef CUresult (*gpa4_t)(const char *, void **, int, cuuint64_t);
typedef CUresult (*gpa5_t)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

static gpa5_t gpa;

static void *get(const char *name, int version, cuuint64_t flags)
{
    void *fn = NULL;
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SUCCESS;
    CUresult e = gpa(name, &fn, version, flags, &st);
    char asked[128];
    snprintf(asked, sizeof asked, "%s@%d/%llu", name, version, (unsigned long long)flags);
    if (e != CUDA_SUCCESS || st != CU_GET_PROC_ADDRESS_SUCCESS) {
        printf("got %s -> error %d status %d\n", asked, (int)e, (int)st);
        return NULL;
    }
    rc_show(asked, fn);
    return fn;
}

int main(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 2;
    }
    gpa5_t v2 = (gpa5_t)dlsym(h, "cuGetProcAddress_v2");
    rc_show("dlsym cuGetProcAddress_v2", (void *)v2);
    if (!v2)
        return 2;
    void *probe = NULL;
    CUdriverProcAddressQueryResult st;
    CUresult pe = v2("", &probe, 0, 0, &st);
    printf("probe: %d%s\n", (int)pe, pe == CUDA_ERROR_STUB_LIBRARY ? " (stub)" : "");
    gpa = v2;
    gpa4_t g11 = (gpa4_t)get("cuGetProcAddress", 11030, 0);
    gpa5_t g12 = (gpa5_t)get("cuGetProcAddress", 12000, 0);
    if (!g11 || !g12)
        return 2;
    /* The 4-argument answer works as such. */
    void *unreg4 = NULL;
    if (g11("cuMemHostUnregister", &unreg4, 4000, 0) == CUDA_SUCCESS)
        rc_show("cuMemHostUnregister@4000/0 via 11030", unreg4);
    gpa = g12;
    rc_api a;
    a.init = (CUresult(*)(unsigned))get("cuInit", 2000, 0);
    a.device_get = (CUresult(*)(CUdevice *, int))get("cuDeviceGet", 2000, 0);
    a.retain = (CUresult(*)(CUcontext *, CUdevice))get("cuDevicePrimaryCtxRetain", 7000, 0);
    a.set_current = (CUresult(*)(CUcontext))get("cuCtxSetCurrent", 4000, 0);
    a.reg = (CUresult(*)(void *, size_t, unsigned))get("cuMemHostRegister", 6050, 0);
    a.unreg = (CUresult(*)(void *))get("cuMemHostUnregister", 4000, 0);
    get("cuMemHostRegister", 4000, 0);
    get("cuMemFree", 3020, 0);
    get("cuPointerGetAttributes", 7000, 0);
    get("cuStreamCreate", 2000, 0);
    get("cuLaunchHostFunc", 10000, 0);
    get("cuLaunchHostFunc", 10000, 2);
    get("cuMemcpyHtoDAsync", 7000, 2);
    get("cuStreamBeginCapture", 10000, 0);
    get("cuStreamBeginCapture", 10010, 2);
    get("cuStreamEndCapture", 10000, 2);
    get("cuCtxDestroy", 4000, 0);
    get("cuDevicePrimaryCtxReset", 11000, 0);
    get("cuEventRecord", 2000, 0);
    get("cuEventRecord", 7000, 2);
    get("cuNoSuchFunction", 12000, 0);
    if (!a.init || !a.device_get || !a.retain || !a.set_current || !a.reg || !a.unreg)
        return 2;
    return rc_hazard(&a);
}
