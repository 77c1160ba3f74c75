/*
 * cuda_hostfn.c - host functions (cuLaunchHostFunc, cuStreamAddCallback):
 * safepin runs each through a trampoline that marks the thread, so that a
 * driver call from inside one is never made (G8: an unregister there is
 * deferred, not the driver's 800).
 *
 * NVIDIA's runtime asks cuCtxGetCurrent, cuCtxGetApiVersion and
 * cuCtxGetDevice_v2 before each of its calls, and the driver refuses them
 * inside a host function with 800 (traced on the H200 with cuda-gdb):
 * cudaHostUnregister there returned that 800 without ever reaching
 * cuMemHostUnregister, so safepin never saw it and the pin leaked. Inside a
 * host function that safepin runs, these answer what the enqueuing thread
 * saw (its context, that context's API version and device), so the runtime goes on to the entry point: an unregister is
 * deferred (sp_cu_host_unregister), and every other call still gets the
 * driver's own 800 there. Nothing changes outside host functions, or in host
 * functions enqueued on paths safepin does not see.
 */
#include "cuda_hooks.h"
#include "cuda_real.h"
#include "diag.h"
#include "lock.h"
#include "runtime.h"
#include "streams.h"
#include "util.h"

extern __thread int sp_tls_in_hostfn __attribute__((tls_model("initial-exec")));

/* What the thread that enqueued a host function saw: its answers inside it. */
typedef struct hostfn_place {
    sp_CUcontext ctx;      /* NULL: none (the answers stay the driver's) */
    unsigned int api;      /* cuCtxGetApiVersion(ctx); 0: unknown */
    sp_CUdevice dev;       /* cuCtxGetDevice(); -1: unknown */
} hostfn_place;

typedef struct trampoline {
    sp_CUhostFn fn;
    sp_CUstreamCallback cb;
    void *ud;
    hostfn_place place;
    int persistent; /* captured: runs on every graph replay, never freed */
} trampoline;

/* The place of the host function this thread runs (ctx NULL: none). */
static __thread hostfn_place here;

/* The place an enqueue from this thread gives its host function. */
static hostfn_place place_of_caller(void)
{
    if (sp_tls_in_hostfn)
        return here; /* the driver answers nothing in here */
    hostfn_place p = {sp_cu_current_ctx(), 0, -1};
    if (!p.ctx)
        return p;
    if (SP_CU_REAL(cuCtxGetApiVersion) && sp_cu.cuCtxGetApiVersion(p.ctx, &p.api) != SP_CUDA_SUCCESS)
        p.api = 0;
    if (SP_CU_REAL(cuCtxGetDevice) && sp_cu.cuCtxGetDevice(&p.dev) != SP_CUDA_SUCCESS)
        p.dev = -1;
    return p;
}

/* 1 when the driver's 800 for this call is the host function's refusal and
 * safepin has the answer to give instead. */
static int answer_here(sp_CUresult e) { return e == SP_CUDA_ERROR_NOT_PERMITTED && sp_tls_in_hostfn && here.ctx; }

sp_CUresult sp_cu_ctx_get_current(sp_CUcontext *pctx)
{
    if (!SP_CU_REAL(cuCtxGetCurrent))
        return SP_CUDA_ERROR_NOT_INITIALIZED;
    sp_CUresult e = sp_cu.cuCtxGetCurrent(pctx);
    if (pctx && answer_here(e)) {
        *pctx = here.ctx;
        return SP_CUDA_SUCCESS;
    }
    return e;
}

sp_CUresult sp_cu_ctx_get_api_version(sp_CUcontext ctx, unsigned int *version)
{
    if (!SP_CU_REAL(cuCtxGetApiVersion))
        return SP_CUDA_ERROR_NOT_INITIALIZED;
    sp_CUresult e = sp_cu.cuCtxGetApiVersion(ctx, version);
    if (version && answer_here(e) && here.api && (!ctx || ctx == here.ctx)) {
        *version = here.api;
        return SP_CUDA_SUCCESS;
    }
    return e;
}

/* cuCtxGetDevice, the current context's device. */
sp_CUresult sp_cu_ctx_get_device(sp_CUresult (*real)(sp_CUdevice *), sp_CUdevice *d)
{
    if (!real)
        return SP_CUDA_ERROR_NOT_INITIALIZED;
    sp_CUresult e = real(d);
    if (d && answer_here(e) && here.dev >= 0) {
        *d = here.dev;
        return SP_CUDA_SUCCESS;
    }
    return e;
}

/* CUDA 13's form: the device of ctx, NULL the current context's. */
sp_CUresult sp_cu_ctx_get_device_v2(sp_CUdevice *d, sp_CUcontext ctx)
{
    if (!SP_CU_REAL(cuCtxGetDevice_v2))
        return SP_CUDA_ERROR_NOT_INITIALIZED;
    sp_CUresult e = sp_cu.cuCtxGetDevice_v2(d, ctx);
    if (d && answer_here(e) && here.dev >= 0 && (!ctx || ctx == here.ctx)) {
        *d = here.dev;
        return SP_CUDA_SUCCESS;
    }
    return e;
}

/* The thread runs a host function enqueued at place p from here to
 * leave(the answer): marked for the hooks. */
static hostfn_place enter(hostfn_place p)
{
    hostfn_place outer = here;
    here = p;
    sp_tls_in_hostfn++;
    return outer;
}

static void leave(hostfn_place outer)
{
    sp_tls_in_hostfn--;
    here = outer;
}

static void run_host_fn(void *arg)
{
    trampoline *t = arg;
    sp_CUhostFn fn = t->fn;
    void *ud = t->ud;
    hostfn_place p = t->place;
    if (!t->persistent)
        sp_mem_free(t);
    SP_TRACE("host function %p(%p) starts", (void *)fn, ud);
    hostfn_place outer = enter(p);
    fn(ud);
    leave(outer);
}

static void run_callback(sp_CUstream s, sp_CUresult status, void *arg)
{
    trampoline *t = arg;
    sp_CUstreamCallback cb = t->cb;
    void *ud = t->ud;
    hostfn_place p = t->place;
    if (!t->persistent)
        sp_mem_free(t);
    SP_TRACE("stream callback %p(%p) starts", (void *)cb, ud);
    hostfn_place outer = enter(p);
    cb(s, status, ud);
    leave(outer);
}

static trampoline *make_trampoline(sp_CUstream s)
{
    trampoline *t = sp_mem_calloc(1, sizeof(*t));
    if (t) {
        sp_lock();
        t->persistent = sp_streams_is_capturing_rt(SP_RT_CUDA, s);
        sp_unlock();
        t->place = place_of_caller();
    }
    return t;
}

sp_CUresult sp_cu_launch_host_func(sp_cu_hostfn_fn real, sp_CUstream s, sp_CUhostFn fn, void *ud)
{
    sp_cu_enter();
    SP_TRACE("cuLaunchHostFunc(%p, %p, %p)", (void *)s, (void *)fn, ud);
    if (!real)
        return SP_CUDA_ERROR_NOT_INITIALIZED;
    trampoline *t = fn ? make_trampoline(s) : NULL;
    if (!t)
        return real(s, fn, ud);
    t->fn = fn;
    t->ud = ud;
    sp_CUresult e = real(s, run_host_fn, t);
    if (e != SP_CUDA_SUCCESS)
        sp_mem_free(t);
    return e;
}

sp_CUresult sp_cu_add_callback(sp_cu_callback_fn real, sp_CUstream s, sp_CUstreamCallback cb,
                               void *ud, unsigned int flags)
{
    sp_cu_enter();
    SP_TRACE("cuStreamAddCallback(%p, %p, %p, %u)", (void *)s, (void *)cb, ud, flags);
    if (!real)
        return SP_CUDA_ERROR_NOT_INITIALIZED;
    trampoline *t = cb ? make_trampoline(s) : NULL;
    if (!t)
        return real(s, cb, ud, flags);
    t->cb = cb;
    t->ud = ud;
    sp_CUresult e = real(s, run_callback, t, flags);
    if (e != SP_CUDA_SUCCESS)
        sp_mem_free(t);
    return e;
}
