/*
 * cuda_shims.c - the exported CUDA driver symbols, nothing else.
 *
 * Each shim is one call into cuda_hooks.c / cuda_streams.c /
 * cuda_procaddr.c with the real function of its own form (_v2, _ptsz).
 * Compiled with -fvisibility=hidden and exported through libsafepin.map.
 * Programs linked with -lcuda reach these through the PLT; cudart and
 * dlopen users get the same functions from dlsym and cuGetProcAddress
 * (cuda_procaddr.c).
 */
#include "cuda_hooks.h"
#include "cuda_real.h"
#include "api_error.h"
#include "runtime.h"

#include <pthread.h>
#include <string.h>

#define SP_EXPORT __attribute__((visibility("default")))

/* As the HIP shims: a hook's body (SP_API_HOOK, api_error.h); rtcall is
 * the runtime call a shared cudart makes of it, named when the call came
 * from there. The caller's address is kept for the diagnostics that name
 * that runtime call. */
#define SP_HOOK(rtcall, args, call)                                                   \
    do {                                                                              \
        sp_cu_caller = __builtin_return_address(0);                                   \
        SP_API_HOOK(sp_CUresult, SP_RT_CUDA, __func__, sp_cu_entry(rtcall), args, call); \
    } while (0)

SP_EXPORT sp_CUresult cuMemHostRegister(void *p, size_t n, unsigned int flags)
{
    SP_HOOK("cudaHostRegister", (p, n, flags),
            sp_cu_host_register(SP_CU_REAL(cuMemHostRegister), "cuMemHostRegister", p, n, flags));
}

SP_EXPORT sp_CUresult cuMemHostRegister_v2(void *p, size_t n, unsigned int flags)
{
    SP_HOOK("cudaHostRegister", (p, n, flags),
            sp_cu_host_register(SP_CU_REAL(cuMemHostRegister_v2), "cuMemHostRegister_v2", p, n,
                                flags));
}

SP_EXPORT sp_CUresult cuMemHostUnregister(void *p)
{
    SP_HOOK("cudaHostUnregister", (p), sp_cu_host_unregister(p));
}

SP_EXPORT sp_CUresult cuMemFree_v2(sp_CUdeviceptr d)
{
    SP_HOOK("cudaFree", (d), sp_cu_mem_free(d));
}

SP_EXPORT sp_CUresult cuPointerGetAttribute(void *data, int attr, sp_CUdeviceptr ptr)
{
    SP_HOOK("cudaPointerGetAttributes", (data, attr, ptr),
            sp_cu_pointer_get_attribute(data, attr, ptr));
}

SP_EXPORT sp_CUresult cuPointerGetAttributes(unsigned int n, int *attrs, void **data,
                                             sp_CUdeviceptr ptr)
{
    SP_HOOK("cudaPointerGetAttributes", (n, attrs, data, ptr),
            sp_cu_pointer_get_attributes(n, attrs, data, ptr));
}

SP_EXPORT sp_CUresult cuMemHostGetDevicePointer_v2(sp_CUdeviceptr *d, void *p, unsigned int flags)
{
    SP_HOOK("cudaHostGetDevicePointer", (d, p, flags), sp_cu_host_get_device_pointer(d, p, flags));
}

SP_EXPORT sp_CUresult cuMemHostGetFlags(unsigned int *flags, void *p)
{
    SP_HOOK("cudaHostGetFlags", (flags, p), sp_cu_host_get_flags(flags, p));
}

SP_EXPORT sp_CUresult cuMemcpyHtoDAsync_v2(sp_CUdeviceptr d, const void *h, size_t n, sp_CUstream s)
{
    SP_HOOK("cudaMemcpyAsync", (d, h, n, s),
            sp_cu_memcpy_htod(SP_CU_REAL(cuMemcpyHtoDAsync_v2), d, h, n, s));
}

SP_EXPORT sp_CUresult cuMemcpyHtoDAsync_v2_ptsz(sp_CUdeviceptr d, const void *h, size_t n,
                                                sp_CUstream s)
{
    SP_HOOK("cudaMemcpyAsync", (d, h, n, s),
            sp_cu_memcpy_htod(SP_CU_REAL(cuMemcpyHtoDAsync_v2_ptsz), d, h, n, s));
}

SP_EXPORT sp_CUresult cuMemcpyDtoHAsync_v2(void *h, sp_CUdeviceptr d, size_t n, sp_CUstream s)
{
    SP_HOOK("cudaMemcpyAsync", (h, d, n, s),
            sp_cu_memcpy_dtoh(SP_CU_REAL(cuMemcpyDtoHAsync_v2), h, d, n, s));
}

SP_EXPORT sp_CUresult cuMemcpyDtoHAsync_v2_ptsz(void *h, sp_CUdeviceptr d, size_t n, sp_CUstream s)
{
    SP_HOOK("cudaMemcpyAsync", (h, d, n, s),
            sp_cu_memcpy_dtoh(SP_CU_REAL(cuMemcpyDtoHAsync_v2_ptsz), h, d, n, s));
}

SP_EXPORT sp_CUresult cuStreamCreate(sp_CUstream *s, unsigned int flags)
{
    SP_HOOK("cudaStreamCreateWithFlags", (s, flags), sp_cu_stream_create(s, flags, 0, 0));
}

SP_EXPORT sp_CUresult cuStreamCreateWithPriority(sp_CUstream *s, unsigned int flags, int priority)
{
    SP_HOOK("cudaStreamCreateWithPriority", (s, flags, priority),
            sp_cu_stream_create(s, flags, priority, 1));
}

SP_EXPORT sp_CUresult cuStreamDestroy(sp_CUstream s)
{
    SP_HOOK("cudaStreamDestroy", (s), sp_cu_stream_destroy(SP_CU_REAL(cuStreamDestroy), s));
}

SP_EXPORT sp_CUresult cuStreamDestroy_v2(sp_CUstream s)
{
    SP_HOOK("cudaStreamDestroy", (s), sp_cu_stream_destroy(SP_CU_REAL(cuStreamDestroy_v2), s));
}

SP_EXPORT sp_CUresult cuStreamBeginCapture(sp_CUstream s)
{
    SP_HOOK("cudaStreamBeginCapture", (s),
            sp_cu_begin_capture(NULL, SP_CU_REAL(cuStreamBeginCapture), s, 0, 0));
}

SP_EXPORT sp_CUresult cuStreamBeginCapture_ptsz(sp_CUstream s)
{
    SP_HOOK("cudaStreamBeginCapture", (s),
            sp_cu_begin_capture(NULL, SP_CU_REAL(cuStreamBeginCapture_ptsz), s, 0, 1));
}

SP_EXPORT sp_CUresult cuStreamBeginCapture_v2(sp_CUstream s, int mode)
{
    SP_HOOK("cudaStreamBeginCapture", (s, mode),
            sp_cu_begin_capture(SP_CU_REAL(cuStreamBeginCapture_v2), NULL, s, mode, 0));
}

SP_EXPORT sp_CUresult cuStreamBeginCapture_v2_ptsz(sp_CUstream s, int mode)
{
    SP_HOOK("cudaStreamBeginCapture", (s, mode),
            sp_cu_begin_capture(SP_CU_REAL(cuStreamBeginCapture_v2_ptsz), NULL, s, mode, 1));
}

SP_EXPORT sp_CUresult cuStreamEndCapture(sp_CUstream s, sp_CUgraph *g)
{
    SP_HOOK("cudaStreamEndCapture", (s, g),
            sp_cu_end_capture(SP_CU_REAL(cuStreamEndCapture), s, g, 0));
}

SP_EXPORT sp_CUresult cuStreamEndCapture_ptsz(sp_CUstream s, sp_CUgraph *g)
{
    SP_HOOK("cudaStreamEndCapture", (s, g),
            sp_cu_end_capture(SP_CU_REAL(cuStreamEndCapture_ptsz), s, g, 1));
}

SP_EXPORT sp_CUresult cuLaunchHostFunc(sp_CUstream s, sp_CUhostFn fn, void *ud)
{
    SP_HOOK("cudaLaunchHostFunc", (s, fn, ud),
            sp_cu_launch_host_func(SP_CU_REAL(cuLaunchHostFunc), s, fn, ud));
}

SP_EXPORT sp_CUresult cuLaunchHostFunc_ptsz(sp_CUstream s, sp_CUhostFn fn, void *ud)
{
    SP_HOOK("cudaLaunchHostFunc", (s, fn, ud),
            sp_cu_launch_host_func(SP_CU_REAL(cuLaunchHostFunc_ptsz), s, fn, ud));
}

SP_EXPORT sp_CUresult cuStreamAddCallback(sp_CUstream s, sp_CUstreamCallback cb, void *ud,
                                          unsigned int flags)
{
    SP_HOOK("cudaStreamAddCallback", (s, cb, ud, flags),
            sp_cu_add_callback(SP_CU_REAL(cuStreamAddCallback), s, cb, ud, flags));
}

SP_EXPORT sp_CUresult cuStreamAddCallback_ptsz(sp_CUstream s, sp_CUstreamCallback cb, void *ud,
                                               unsigned int flags)
{
    SP_HOOK("cudaStreamAddCallback", (s, cb, ud, flags),
            sp_cu_add_callback(SP_CU_REAL(cuStreamAddCallback_ptsz), s, cb, ud, flags));
}

SP_EXPORT sp_CUresult cuCtxCreate(sp_CUcontext *c, unsigned int flags, sp_CUdevice d)
{
    SP_HOOK(NULL, (c, flags, d), sp_cu_ctx_create(SP_CU_REAL(cuCtxCreate), c, flags, d));
}

SP_EXPORT sp_CUresult cuCtxCreate_v2(sp_CUcontext *c, unsigned int flags, sp_CUdevice d)
{
    SP_HOOK(NULL, (c, flags, d), sp_cu_ctx_create(SP_CU_REAL(cuCtxCreate_v2), c, flags, d));
}

SP_EXPORT sp_CUresult cuCtxCreate_v3(sp_CUcontext *c, void *params, int n, unsigned int flags,
                                     sp_CUdevice d)
{
    SP_HOOK(NULL, (c, params, n, flags, d),
            sp_cu_ctx_create_v3(SP_CU_REAL(cuCtxCreate_v3), c, params, n, flags, d));
}

SP_EXPORT sp_CUresult cuCtxCreate_v4(sp_CUcontext *c, void *params, unsigned int flags,
                                     sp_CUdevice d)
{
    SP_HOOK(NULL, (c, params, flags, d),
            sp_cu_ctx_create_v4(SP_CU_REAL(cuCtxCreate_v4), c, params, flags, d));
}

SP_EXPORT sp_CUresult cuDevicePrimaryCtxRetain(sp_CUcontext *c, sp_CUdevice d)
{
    SP_HOOK(NULL, (c, d), sp_cu_primary_ctx_retain(SP_CU_REAL(cuDevicePrimaryCtxRetain), c, d));
}

SP_EXPORT sp_CUresult cuCtxDestroy(sp_CUcontext c)
{
    SP_HOOK(NULL, (c), sp_cu_ctx_destroy(SP_CU_REAL(cuCtxDestroy), c));
}

SP_EXPORT sp_CUresult cuCtxDestroy_v2(sp_CUcontext c)
{
    SP_HOOK(NULL, (c), sp_cu_ctx_destroy(SP_CU_REAL(cuCtxDestroy_v2), c));
}

SP_EXPORT sp_CUresult cuDevicePrimaryCtxReset(sp_CUdevice d)
{
    SP_HOOK("cudaDeviceReset", (d),
            sp_cu_primary_ctx_end(SP_CU_REAL(cuDevicePrimaryCtxReset), d, 1));
}

SP_EXPORT sp_CUresult cuDevicePrimaryCtxReset_v2(sp_CUdevice d)
{
    SP_HOOK("cudaDeviceReset", (d),
            sp_cu_primary_ctx_end(SP_CU_REAL(cuDevicePrimaryCtxReset_v2), d, 1));
}

SP_EXPORT sp_CUresult cuDevicePrimaryCtxRelease(sp_CUdevice d)
{
    SP_HOOK(NULL, (d), sp_cu_primary_ctx_end(SP_CU_REAL(cuDevicePrimaryCtxRelease), d, 0));
}

SP_EXPORT sp_CUresult cuDevicePrimaryCtxRelease_v2(sp_CUdevice d)
{
    SP_HOOK(NULL, (d), sp_cu_primary_ctx_end(SP_CU_REAL(cuDevicePrimaryCtxRelease_v2), d, 0));
}

/* NVIDIA's shared runtime's entry (cudart.c). Its return is a cudaError_t. */
SP_EXPORT int cudaHostUnregister(void *p)
{
    void *caller = __builtin_return_address(0);
    int old;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
    sp_tls_in_hook++;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    int e = sp_cudart_host_unregister(p, caller);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    sp_tls_in_hook--;
    pthread_setcancelstate(old, NULL);
    return e;
}

/* 11030: four arguments. */
SP_EXPORT sp_CUresult cuGetProcAddress(const char *sym, void **pfn, int version, uint64_t flags)
{
    SP_HOOK("cudaGetDriverEntryPoint", (sym, pfn, version, flags),
            sp_cu_get_proc_address(sym, pfn, version, flags, NULL, 0));
}

/* 12000: five, the last the query's status. */
SP_EXPORT sp_CUresult cuGetProcAddress_v2(const char *sym, void **pfn, int version, uint64_t flags,
                                          int *status)
{
    SP_HOOK("cudaGetDriverEntryPoint", (sym, pfn, version, flags, status),
            sp_cu_get_proc_address(sym, pfn, version, flags, status, 1));
}

void *sp_cuda_shim_for(const char *name)
{
    /* Every HOOK entry of the one list, by its exact name. */
    static const struct {
        const char *name;
        void *fn;
    } shims[] = {
#define SP_CU_HOOK(n) {#n, (void *)n},
#define SP_CU_RT(n) SP_CU_HOOK(n)
#define SP_CU_CALL(n)
#define SP_CU(kind, ret, name, params) SP_CU_##kind(name)
#include "cuda_real.inc"
#undef SP_CU
#undef SP_CU_CALL
#undef SP_CU_RT
#undef SP_CU_HOOK
    };
    if (!name || name[0] != 'c' || name[1] != 'u')
        return NULL;
    for (size_t i = 0; i < sizeof(shims) / sizeof(shims[0]); i++)
        if (strcmp(shims[i].name, name) == 0)
            return shims[i].fn;
    return NULL;
}
