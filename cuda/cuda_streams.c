/*
 * cuda_streams.c - the CUDA face's stream hooks: creation and destruction,
 * capture begin/end in every form, host functions (cuLaunchHostFunc,
 * cuStreamAddCallback), the contexts the program makes, and the end of a
 * context, which settles that context's ranges first. The logic is the
 * core's (core.h); the real function of each form, and the primary
 * contexts' bookkeeping, are CUDA's own. NVIDIA's runtime reaches these
 * entry points through cuGetProcAddress, so host functions it enqueues are
 * marked too; what its own calls do inside them is cudart.c's concern.
 */
#include "cuda_hooks.h"
#include "cuda_real.h"
#include "core.h"
#include "diag.h"
#include "runtime.h"
#include "streams.h"
#include "util.h"

/* ---- streams -------------------------------------------------------------- */

sp_CUresult sp_cu_stream_create(sp_CUstream *s, unsigned int flags, int priority, int with_priority)
{
    sp_cu_enter();
    sp_CUresult e;
    if (with_priority)
        e = SP_CU_REAL(cuStreamCreateWithPriority) ? sp_cu.cuStreamCreateWithPriority(s, flags, priority)
                                                    : SP_CUDA_ERROR_NOT_INITIALIZED;
    else
        e = SP_CU_REAL(cuStreamCreate) ? sp_cu.cuStreamCreate(s, flags) : SP_CUDA_ERROR_NOT_INITIALIZED;
    return s ? sp_core_stream_created(SP_RT_CUDA, e, *s, flags) : e;
}

sp_CUresult sp_cu_stream_destroy(sp_cu_begin1_fn real, sp_CUstream s)
{
    sp_cu_enter();
    if (!real)
        return SP_CUDA_ERROR_NOT_INITIALIZED;
    /* From a host function the driver refuses it (800 on the H200) and the
     * stream lives on, as safepin's table has it: the same answer (G10). */
    if (sp_core_stream_destroy(SP_RT_CUDA, s))
        return SP_CUDA_SUCCESS;
    return real(s);
}

/* ---- capture ---------------------------------------------------------------- */

typedef struct capture_args {
    sp_cu_begin_fn begin;
    sp_cu_begin1_fn begin1; /* the 10000 form: no mode (global) */
    sp_cu_end_fn end;
    sp_CUstream s;
    int mode;
    sp_CUgraph *graph;
} capture_args;

/* The real begin (of its form) or end of a capture, made by the tracker. */
static int capture_call(void *s, void *arg)
{
    (void)s;
    capture_args *a = arg;
    return a->end ? a->end(a->s, a->graph) : a->begin ? a->begin(a->s, a->mode) : a->begin1(a->s);
}

/* The handle the stream tracker knows s by: a _ptsz form's NULL stream is
 * the calling thread's per-thread stream, not the legacy one (each thread
 * captures its own). The real call gets s as the program gave it. */
static sp_CUstream tracked(sp_CUstream s, int ptsz) { return ptsz && !s ? SP_CU_STREAM_PER_THREAD : s; }

sp_CUresult sp_cu_begin_capture(sp_cu_begin_fn real, sp_cu_begin1_fn real1, sp_CUstream s, int mode, int ptsz)
{
    sp_cu_enter();
    if (!real && !real1)
        return SP_CUDA_ERROR_NOT_SUPPORTED;
    capture_args a = {real, real1, NULL, s, mode, NULL};
    /* (The 10000 form has no mode: it captures as global mode does.) */
    return sp_streams_begin_capture_rt(SP_RT_CUDA, tracked(s, ptsz), real ? mode : SP_CAPTURE_GLOBAL, capture_call,
                                       &a);
}

sp_CUresult sp_cu_end_capture(sp_cu_end_fn real, sp_CUstream s, sp_CUgraph *g, int ptsz)
{
    sp_cu_enter();
    if (!real)
        return SP_CUDA_ERROR_NOT_SUPPORTED;
    capture_args a = {NULL, NULL, real, s, 0, g};
    return sp_streams_end_capture_rt(SP_RT_CUDA, tracked(s, ptsz), capture_call, &a);
}

/* ---- contexts the program makes ------------------------------------------------ */

/* A context the program created: markers cover its legacy stream from now
 * on, whether or not a hooked call ever runs with it current (work on its
 * legacy and per-thread streams is enqueued through calls safepin does not
 * hook). Primary contexts need no such list: every marker set asks which
 * are active (cuda_ops.c). */
static sp_CUresult ctx_made(sp_CUresult e, sp_CUcontext *pctx)
{
    if (e == SP_CUDA_SUCCESS && pctx && *pctx)
        sp_core_place_made(SP_RT_CUDA, *pctx);
    return e;
}

sp_CUresult sp_cu_ctx_create(sp_cu_ctx_create_fn real, sp_CUcontext *pctx, unsigned int flags,
                             sp_CUdevice dev)
{
    sp_cu_enter();
    if (!real)
        return SP_CUDA_ERROR_NOT_SUPPORTED;
    return ctx_made(real(pctx, flags, dev), pctx);
}

sp_CUresult sp_cu_ctx_create_v3(sp_cu_ctx_create3_fn real, sp_CUcontext *pctx, void *params,
                                int nparams, unsigned int flags, sp_CUdevice dev)
{
    sp_cu_enter();
    if (!real)
        return SP_CUDA_ERROR_NOT_SUPPORTED;
    return ctx_made(real(pctx, params, nparams, flags, dev), pctx);
}

sp_CUresult sp_cu_ctx_create_v4(sp_cu_ctx_create4_fn real, sp_CUcontext *pctx, void *params,
                                unsigned int flags, sp_CUdevice dev)
{
    sp_cu_enter();
    if (!real)
        return SP_CUDA_ERROR_NOT_SUPPORTED;
    return ctx_made(real(pctx, params, flags, dev), pctx);
}

sp_CUresult sp_cu_primary_ctx_retain(sp_cu_retain_fn real, sp_CUcontext *pctx, sp_CUdevice dev)
{
    sp_cu_enter();
    if (!real)
        return SP_CUDA_ERROR_NOT_INITIALIZED;
    sp_CUresult e = real(pctx, dev);
    if (e == SP_CUDA_SUCCESS && pctx)
        sp_cu_primary_seen(dev, *pctx);
    return e;
}

/* ---- the end of a context ------------------------------------------------------ */

sp_CUresult sp_cu_ctx_destroy(sp_cu_ctx_fn real, sp_CUcontext ctx)
{
    sp_cu_enter();
    if (!real)
        return SP_CUDA_ERROR_NOT_INITIALIZED;
    if (sp_tls_in_hostfn || !ctx)
        return real(ctx);
    sp_core_place_ending(SP_RT_CUDA, ctx);
    sp_CUresult e = real(ctx);
    if (e == SP_CUDA_SUCCESS)
        sp_core_place_ended(SP_RT_CUDA, ctx);
    return e;
}

/* The primary context of dev, without changing its reference count; NULL
 * where it is not active (a retain would create one). */
static sp_CUcontext primary_of(sp_CUdevice dev, sp_cu_dev_fn release)
{
    sp_CUcontext c = NULL;
    unsigned flags = 0;
    int active = 1;
    if (sp_cu.cuDevicePrimaryCtxGetState &&
        sp_cu.cuDevicePrimaryCtxGetState(dev, &flags, &active) == SP_CUDA_SUCCESS && !active)
        return NULL;
    if (!sp_cu.cuDevicePrimaryCtxRetain || sp_cu.cuDevicePrimaryCtxRetain(&c, dev) != SP_CUDA_SUCCESS)
        return NULL;
    if (release)
        release(dev);
    return c;
}

/* 1 if the primary context of dev is no longer active (unknown: reset). */
static int primary_gone(sp_CUdevice dev, int reset)
{
    unsigned flags = 0;
    int active = 0;
    if (!sp_cu.cuDevicePrimaryCtxGetState ||
        sp_cu.cuDevicePrimaryCtxGetState(dev, &flags, &active) != SP_CUDA_SUCCESS)
        return reset;
    return !active;
}

sp_CUresult sp_cu_primary_ctx_end(sp_cu_dev_fn real, sp_CUdevice dev, int reset)
{
    sp_cu_enter();
    if (!real)
        return SP_CUDA_ERROR_NOT_INITIALIZED;
    if (sp_tls_in_hostfn)
        return real(dev);
    sp_cu_dev_fn rel = sp_cu.cuDevicePrimaryCtxRelease_v2 ? sp_cu.cuDevicePrimaryCtxRelease_v2
                                                          : sp_cu.cuDevicePrimaryCtxRelease;
    sp_CUcontext ctx = primary_of(dev, rel);
    sp_core_place_ending(SP_RT_CUDA, ctx);
    sp_CUresult e = real(dev);
    int gone = e == SP_CUDA_SUCCESS && primary_gone(dev, reset);
    if (gone)
        sp_cu_primary_seen(dev, NULL);
    if (gone)
        sp_core_place_ended(SP_RT_CUDA, ctx);
    return e;
}

/* ---- host functions -------------------------------------------------------------- */

sp_CUresult sp_cu_launch_host_func(sp_cu_hostfn_fn real, sp_CUstream s, sp_CUhostFn fn, void *ud)
{
    sp_cu_enter();
    SP_TRACE("cuLaunchHostFunc(%p, %p, %p)", (void *)s, (void *)fn, ud);
    if (!real)
        return SP_CUDA_ERROR_NOT_INITIALIZED;
    void *arg = NULL;
    sp_host_fn t = sp_core_host_fn(SP_RT_CUDA, s, fn, ud, &arg);
    if (!t)
        return real(s, fn, ud);
    sp_CUresult e = real(s, t, arg);
    if (e != SP_CUDA_SUCCESS)
        sp_core_host_fn_failed(arg);
    return e;
}

sp_CUresult sp_cu_add_callback(sp_cu_callback_fn real, sp_CUstream s, sp_CUstreamCallback cb,
                               void *ud, unsigned int flags)
{
    sp_cu_enter();
    SP_TRACE("cuStreamAddCallback(%p, %p, %p, %u)", (void *)s, (void *)cb, ud, flags);
    if (!real)
        return SP_CUDA_ERROR_NOT_INITIALIZED;
    void *arg = NULL;
    sp_stream_cb t = sp_core_stream_cb(SP_RT_CUDA, s, (sp_stream_cb)(void (*)(void))cb, ud, &arg);
    if (!t)
        return real(s, cb, ud, flags);
    sp_CUresult e = real(s, (sp_CUstreamCallback)(void (*)(void))t, arg, flags);
    if (e != SP_CUDA_SUCCESS)
        sp_core_host_fn_failed(arg);
    return e;
}
