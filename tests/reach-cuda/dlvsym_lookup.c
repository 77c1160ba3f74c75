/*
 * dlvsym_lookup.c - a CUDA program (or a loader) that takes its driver
 * functions with dlvsym, a versioned look-up, which never takes an
 * LD_PRELOAD library's unversioned definitions. Usage:
 *
 *   dlvsym_lookup HOW VERSION    HOW: handle, default, next, next-dlopen
 *                                (tests/reach/dlvsym_common.h)
 *
 * A driver that exports unversioned names (simcuda as libcuda.so.1) has
 * nothing for dlvsym to find; simcuda built with its exports in a version
 * node (build/simcuda/versioned, SIMCUDA_1) has. The program looks up
 * hooked functions in their exact forms (_v2, _ptsz), functions safepin
 * does not hook, and names or versions the driver does not have, then
 * meets the identical re-register hazard through what it got (712 on the
 * bare driver). Exit 3 when the functions were not all found. With
 * DLVSYM_CUDART=path, also the runtime's cudaHostUnregister from a handle
 * of that library (NVIDIA's versioned libcudart.so.13, or its stand-in).
 */
#include "reach_cuda.h"

#include "../reach/dlvsym_common.h"

int main(int argc, char **argv)
{
    if (argc < 3 || dv_load(argv[1], "libcuda.so.1"))
        return 2;
    const char *how = argv[1], *v = argv[2];
    setvbuf(stdout, NULL, _IOLBF, 0);
    rc_api a;
    /* hooked: safepin must hand out its shims, of the exact form */
    a.reg = (CUresult(*)(void *, size_t, unsigned))dv_lookup(how, "cuMemHostRegister_v2", v);
    a.unreg = (CUresult(*)(void *))dv_lookup(how, "cuMemHostUnregister", v);
    dv_lookup(how, "cuMemHostRegister", v);
    dv_lookup(how, "cuMemFree_v2", v);
    dv_lookup(how, "cuLaunchHostFunc_ptsz", v);
    dv_lookup(how, "cuStreamBeginCapture_v2", v);
    dv_lookup(how, "cuGetProcAddress_v2", v);
    /* not hooked: glibc's own answer */
    a.init = (CUresult(*)(unsigned))dv_lookup(how, "cuInit", v);
    a.device_get = (CUresult(*)(CUdevice *, int))dv_lookup(how, "cuDeviceGet", v);
    a.retain = (CUresult(*)(CUcontext *, CUdevice))dv_lookup(how, "cuDevicePrimaryCtxRetain", v);
    a.set_current = (CUresult(*)(CUcontext))dv_lookup(how, "cuCtxSetCurrent", v);
    /* what the driver does not have: NULL and dlerror() */
    dv_lookup(how, "cuNoSuchFunction", v);
    dv_lookup(how, "cuMemHostRegister_v2", "SIMCUDA_9");
    /* NVIDIA's shared runtime (its stand-in, $DLVSYM_CUDART): safepin's
     * cudaHostUnregister forwards to the runtime of its caller, not
     * necessarily to this one, so the runtime's own function comes back. */
    const char *rt = getenv("DLVSYM_CUDART");
    if (rt) {
        void *driver = dv_handle;
        dv_handle = dlopen(rt, RTLD_NOW | RTLD_LOCAL);
        if (!dv_handle)
            return fprintf(stderr, "dlopen %s: %s\n", rt, dlerror()), 2;
        dv_lookup("handle", "cudaHostUnregister", "libcudart.so.13");
        dv_handle = driver;
    }
    if (!a.init || !a.device_get || !a.retain || !a.set_current || !a.reg || !a.unreg) {
        printf("not all found\n");
        return 3;
    }
    return rc_hazard(&a);
}
