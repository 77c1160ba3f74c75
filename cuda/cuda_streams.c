/*
 * cuda_streams.c - the CUDA face's stream hooks: creation and destruction
 * (which streams markers must cover, per context), capture begin/end in
 * every form, and the end of a context, which settles that context's ranges
 * first. Host functions are in cuda_hostfn.c.
 */
#include "cuda_hooks.h"
#include "cuda_real.h"
#include "diag.h"
#include "reaper.h"
#include "registry.h"
#include "lock.h"
#include "runtime.h"
#include "streams.h"

extern __thread int sp_tls_in_hostfn __attribute__((tls_model("initial-exec")));

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
    if (e == SP_CUDA_SUCCESS && s) {
        sp_CUcontext ctx = sp_cu_current_ctx();
        sp_lock();
        sp_streams_add_rt(SP_RT_CUDA, *s, flags, ctx);
        sp_unlock();
    }
    return e;
}

sp_CUresult sp_cu_stream_destroy(sp_cu_begin1_fn real, sp_CUstream s)
{
    sp_cu_enter();
    if (!real)
        return SP_CUDA_ERROR_NOT_INITIALIZED;
    /* The driver refuses it from a host function (800 on the H200) and the
     * stream lives on, as safepin's table has it: the same answer (G10),
     * where HIP's destroy there is deferred. */
    if (sp_tls_in_hostfn)
        return real(s);
    if (sp_streams_destroy_rt(SP_RT_CUDA, s)) {
        /* From a host function: the reaper leaves the tail marker and
         * destroys the stream. */
        sp_lock();
        sp_reaper_poke();
        sp_unlock();
        sp_reaper_kick();
        return SP_CUDA_SUCCESS;
    }
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

static int begin_call(void *arg)
{
    capture_args *a = arg;
    return a->begin ? a->begin(a->s, a->mode) : a->begin1(a->s);
}

static int end_call(void *arg)
{
    capture_args *a = arg;
    return a->end(a->s, a->graph);
}

sp_CUresult sp_cu_begin_capture(sp_cu_begin_fn real, sp_cu_begin1_fn real1, sp_CUstream s, int mode)
{
    sp_cu_enter();
    if (!real && !real1)
        return SP_CUDA_ERROR_NOT_SUPPORTED;
    capture_args a = {real, real1, NULL, s, mode, NULL};
    return sp_streams_begin_capture_rt(SP_RT_CUDA, s, begin_call, &a);
}

sp_CUresult sp_cu_end_capture(sp_cu_end_fn real, sp_CUstream s, sp_CUgraph *g)
{
    sp_cu_enter();
    if (!real)
        return SP_CUDA_ERROR_NOT_SUPPORTED;
    capture_args a = {NULL, NULL, real, s, 0, g};
    return sp_streams_end_capture_rt(SP_RT_CUDA, s, end_call, &a);
}

/* ---- contexts the program makes ------------------------------------------------ */

/* A context the program created: markers cover its legacy stream from now
 * on, whether or not a hooked call ever runs with it current (work on its
 * legacy and per-thread streams is enqueued through calls safepin does not
 * hook). Primary contexts need no such list: every marker set asks which
 * are active (cuda_ops.c). */
static sp_CUresult ctx_made(sp_CUresult e, sp_CUcontext *pctx)
{
    if (e == SP_CUDA_SUCCESS && pctx && *pctx) {
        sp_lock();
        sp_streams_add_place(SP_RT_CUDA, *pctx);
        sp_unlock();
    }
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

/* Lock held. Waits until no release of ctx is pending; the hold lets them
 * go at once (sp_reaper_wait_pending counts as a waiter). */
static void settle_ctx(sp_CUcontext ctx)
{
    for (;;) {
        sp_range *first = NULL;
        for (sp_range *r = sp_reg_find_overlap(0, SIZE_MAX); r; r = sp_reg_next(r))
            if (r->rt == SP_RT_CUDA && r->place == ctx && r->state == SP_RANGE_RELEASING) {
                first = r;
                break;
            }
        if (!first)
            return;
        sp_reaper_wait_range(first->base, first->id);
    }
}

/* Lock held. The context is gone: its live registrations went with it. */
static void forget_ctx(sp_CUcontext ctx)
{
    for (sp_range *r = sp_reg_find_overlap(0, SIZE_MAX), *next; r; r = next) {
        next = sp_reg_next(r);
        if (r->rt != SP_RT_CUDA || r->place != ctx || r->state != SP_RANGE_LIVE || r->registering)
            continue;
        sp_log(SP_LOG_INFO, "info",
               "0x%lx (%zu bytes) was still registered when its context was destroyed: the "
               "driver dropped the registration with it",
               (unsigned long)r->base, r->size);
        sp_history_add(SP_EV_RELEASED, r->base, r->size, NULL);
        sp_site_free(sp_sites(r)->reg);
        sp_site_free(sp_sites(r)->unreg);
        sp_sites(r)->reg = sp_sites(r)->unreg = NULL;
        sp_reg_remove(r);
    }
    sp_streams_drop_place(SP_RT_CUDA, ctx);
    sp_lock_broadcast();
}

sp_CUresult sp_cu_ctx_destroy(sp_cu_ctx_fn real, sp_CUcontext ctx)
{
    sp_cu_enter();
    if (!real)
        return SP_CUDA_ERROR_NOT_INITIALIZED;
    if (sp_tls_in_hostfn || !ctx)
        return real(ctx);
    sp_lock();
    settle_ctx(ctx);
    sp_unlock();
    sp_CUresult e = real(ctx);
    if (e == SP_CUDA_SUCCESS) {
        sp_lock();
        forget_ctx(ctx);
        sp_unlock();
    }
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
    if (ctx) {
        sp_lock();
        settle_ctx(ctx);
        sp_unlock();
    }
    sp_CUresult e = real(dev);
    int gone = e == SP_CUDA_SUCCESS && primary_gone(dev, reset);
    if (gone)
        sp_cu_primary_seen(dev, NULL);
    if (gone && ctx) {
        sp_lock();
        forget_ctx(ctx);
        sp_unlock();
    }
    return e;
}
