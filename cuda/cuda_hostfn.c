/*
 * cuda_hostfn.c - host functions (cuLaunchHostFunc, cuStreamAddCallback):
 * safepin runs each through a trampoline that marks the thread, so that no
 * driver call is made from inside one (G8: an unregister there is deferred,
 * not the driver's 800). NVIDIA's runtime reaches these entry points through
 * cuGetProcAddress, so host functions it enqueues are marked too; what its
 * own calls do inside them is cudart.c's concern.
 */
#include "cuda_hooks.h"
#include "cuda_real.h"
#include "diag.h"
#include "lock.h"
#include "runtime.h"
#include "streams.h"
#include "util.h"

extern __thread int sp_tls_in_hostfn __attribute__((tls_model("initial-exec")));

typedef struct trampoline {
    sp_CUhostFn fn;
    sp_CUstreamCallback cb;
    void *ud;
    int persistent; /* captured: runs on every graph replay, never freed */
} trampoline;

static void run_host_fn(void *arg)
{
    trampoline *t = arg;
    sp_CUhostFn fn = t->fn;
    void *ud = t->ud;
    if (!t->persistent)
        sp_mem_free(t);
    SP_TRACE("host function %p(%p) starts", (void *)fn, ud);
    sp_tls_in_hostfn++;
    fn(ud);
    sp_tls_in_hostfn--;
}

static void run_callback(sp_CUstream s, sp_CUresult status, void *arg)
{
    trampoline *t = arg;
    sp_CUstreamCallback cb = t->cb;
    void *ud = t->ud;
    if (!t->persistent)
        sp_mem_free(t);
    SP_TRACE("stream callback %p(%p) starts", (void *)cb, ud);
    sp_tls_in_hostfn++;
    cb(s, status, ud);
    sp_tls_in_hostfn--;
}

static trampoline *make_trampoline(sp_CUstream s)
{
    trampoline *t = sp_mem_calloc(1, sizeof(*t));
    if (t) {
        sp_lock();
        t->persistent = sp_streams_is_capturing_rt(SP_RT_CUDA, s);
        sp_unlock();
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
