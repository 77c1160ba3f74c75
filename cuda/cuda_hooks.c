/*
 * cuda_hooks.c - the CUDA face's memory hooks: register, unregister,
 * cuMemFree_v2, pointer attributes and queries, copies of ranges whose
 * release is pending. Each hands the call to the core (core.h) with the
 * real function of its own form (_v2) and the runtime call that reached it
 * (sp_cu_entry: cudaHostRegister through a shared cudart); what is CUDA's
 * own is here: the attribute answers for a pending range.
 */
#include "cuda_hooks.h"
#include "cuda_real.h"
#include "api_error.h"
#include "core.h"
#include "runtime.h"

static sp_CUdeviceptr dptr(const void *p) { return (sp_CUdeviceptr)(uintptr_t)p; }

/* ---- register, unregister, free ---------------------------------------------- */

static int register_thunk(void *real, void *p, size_t size, unsigned flags)
{
    return ((sp_cu_register_fn)real)(p, size, flags);
}

sp_CUresult sp_cu_host_register(sp_cu_register_fn real, const char *name, void *p, size_t size,
                                unsigned int flags)
{
    sp_cu_enter();
    if (!real)
        return SP_CUDA_ERROR_NOT_INITIALIZED;
    sp_call c = {name, "cudaHostRegister"};
    return sp_core_register(SP_RT_CUDA, &c, register_thunk, (void *)real, p, size, flags);
}

sp_CUresult sp_cu_host_unregister(void *p)
{
    sp_cu_enter();
    static const sp_call c = {"cuMemHostUnregister", "cudaHostUnregister"};
    return sp_core_unregister(SP_RT_CUDA, &c, p);
}

sp_CUresult sp_cu_mem_free(sp_CUdeviceptr d)
{
    sp_cu_enter();
    if (!SP_CU_REAL(cuMemFree_v2))
        return SP_CUDA_ERROR_NOT_INITIALIZED;
    static const sp_call c = {"cuMemFree_v2", "cudaFree"};
    return sp_core_device_free(SP_RT_CUDA, &c, (void *)(uintptr_t)d);
}

/* ---- attributes and queries ---------------------------------------------------- */

sp_CUresult sp_cu_pointer_get_attribute(void *data, int attr, sp_CUdeviceptr ptr)
{
    sp_cu_enter();
    if (!SP_CU_REAL(cuPointerGetAttribute))
        return SP_CUDA_ERROR_NOT_INITIALIZED;
    /* With somewhere to answer, an error says the driver does not know ptr
     * (or the attribute): programs ask that of any pointer, not an api-error. */
    if (data)
        sp_api_probe();
    uint64_t tok;
    void *q = sp_core_query_begin(SP_RT_CUDA, (void *)(uintptr_t)ptr, &tok);
    sp_CUresult e = sp_cu.cuPointerGetAttribute(data, attr, dptr(q));
    sp_core_query_end(tok);
    if (sp_core_is_probe(q) && e == SP_CUDA_SUCCESS && data &&
        attr == SP_CU_POINTER_ATTRIBUTE_HOST_POINTER && *(void **)data == q)
        *(void **)data = (void *)(uintptr_t)ptr;
    return e;
}

sp_CUresult sp_cu_pointer_get_attributes(unsigned int n, int *attrs, void **data, sp_CUdeviceptr ptr)
{
    sp_cu_enter();
    if (!SP_CU_REAL(cuPointerGetAttributes))
        return SP_CUDA_ERROR_NOT_INITIALIZED;
    if (n && attrs && data)
        sp_api_probe(); /* as above */
    uint64_t tok;
    void *q = sp_core_query_begin(SP_RT_CUDA, (void *)(uintptr_t)ptr, &tok);
    sp_CUresult e = sp_cu.cuPointerGetAttributes(n, attrs, data, dptr(q));
    sp_core_query_end(tok);
    if (sp_core_is_probe(q) && e == SP_CUDA_SUCCESS && attrs && data)
        for (unsigned i = 0; i < n; i++)
            if (attrs[i] == SP_CU_POINTER_ATTRIBUTE_HOST_POINTER && data[i] &&
                *(void **)data[i] == q)
                *(void **)data[i] = (void *)(uintptr_t)ptr;
    return e;
}

sp_CUresult sp_cu_host_get_device_pointer(sp_CUdeviceptr *d, void *p, unsigned int flags)
{
    sp_cu_enter();
    if (!SP_CU_REAL(cuMemHostGetDevicePointer_v2))
        return SP_CUDA_ERROR_NOT_INITIALIZED;
    /* As attribute queries: an error answers whether p is registered. */
    if (d && flags == 0)
        sp_api_probe();
    uint64_t tok;
    void *q = sp_core_query_begin(SP_RT_CUDA, p, &tok);
    sp_CUresult e = sp_cu.cuMemHostGetDevicePointer_v2(d, q, flags);
    sp_core_query_end(tok);
    if (e == SP_CUDA_SUCCESS)
        sp_core_note_use(p);
    return e;
}

sp_CUresult sp_cu_host_get_flags(unsigned int *flags, void *p)
{
    sp_cu_enter();
    if (!SP_CU_REAL(cuMemHostGetFlags))
        return SP_CUDA_ERROR_NOT_INITIALIZED;
    if (flags)
        sp_api_probe(); /* as above */
    uint64_t tok;
    void *q = sp_core_query_begin(SP_RT_CUDA, p, &tok);
    sp_CUresult e = sp_cu.cuMemHostGetFlags(flags, q);
    sp_core_query_end(tok);
    return e;
}

/* ---- copies of host ranges whose release is pending ---------------------------- */

/* One of the copies (host side: src, to the device; dst, from it). */
static sp_CUresult copy(sp_cu_htod_fn htod, sp_cu_dtoh_fn dtoh, uintptr_t dst, uintptr_t src,
                        size_t n, sp_CUstream s)
{
    sp_copy st;
    sp_core_copy_begin(SP_RT_CUDA, (void *)(htod ? src : dst), NULL, n, s, &st);
    sp_CUresult e = htod ? htod(dst, (const void *)src, n, s) : dtoh((void *)dst, src, n, s);
    sp_core_copy_end(SP_RT_CUDA, &st, e, s);
    return e;
}

sp_CUresult sp_cu_memcpy_htod(sp_cu_htod_fn real, sp_CUdeviceptr dst, const void *src, size_t n,
                              sp_CUstream s)
{
    return real ? copy(real, NULL, dst, (uintptr_t)src, n, s) : SP_CUDA_ERROR_NOT_INITIALIZED;
}

sp_CUresult sp_cu_memcpy_dtoh(sp_cu_dtoh_fn real, void *dst, sp_CUdeviceptr src, size_t n,
                              sp_CUstream s)
{
    return real ? copy(NULL, real, (uintptr_t)dst, src, n, s) : SP_CUDA_ERROR_NOT_INITIALIZED;
}
