/*
 * dlopen_handle.c - a dlopen user (Python ctypes, Julia): the driver is
 * loaded RTLD_LOCAL and every function taken with dlsym on its handle,
 * which LD_PRELOAD alone does not interpose. Then the hazard, through them.
 */
#include "reach_cuda.h"

static void *sym(void *h, const char *name)
{
    void *fn = dlsym(h, name);
    rc_show(name, fn);
    return fn;
}

int main(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 2;
    }
    rc_api a;
    a.init = (CUresult(*)(unsigned))sym(h, "cuInit");
    a.device_get = (CUresult(*)(CUdevice *, int))sym(h, "cuDeviceGet");
    a.retain = (CUresult(*)(CUcontext *, CUdevice))sym(h, "cuDevicePrimaryCtxRetain");
    a.set_current = (CUresult(*)(CUcontext))sym(h, "cuCtxSetCurrent");
    a.reg = (CUresult(*)(void *, size_t, unsigned))sym(h, "cuMemHostRegister_v2");
    a.unreg = (CUresult(*)(void *))sym(h, "cuMemHostUnregister");
    sym(h, "cuMemFree_v2");
    sym(h, "cuLaunchHostFunc_ptsz");
    if (!a.init || !a.device_get || !a.retain || !a.set_current || !a.reg || !a.unreg)
        return 2;
    return rc_hazard(&a);
}
