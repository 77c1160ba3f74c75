/*
 * cudart.c - the one function of NVIDIA's runtime that safepin exports:
 * cudaHostUnregister.
 *
 * Traced on the H200 with cuda-gdb: inside a host function the runtime
 * refuses cudaHostUnregister with 800 before it reaches the driver's
 * cuMemHostUnregister. Its prologue asks the driver for the current context
 * (cuCtxGetCurrent, cuCtxGetApiVersion, cuCtxGetDevice_v2) and then calls
 * private driver interfaces, and the driver refuses each of them from a host
 * function; answering the public ones in safepin's place was tried and is
 * not enough. So, for the shared runtime (nvcc -cudart shared, CuPy,
 * PyTorch):
 *   - inside a host function that safepin runs (the runtime enqueues them
 *     through the hooked cuLaunchHostFunc and cuStreamAddCallback), the call
 *     is safepin's deferred unregister (G8) and never reaches the runtime;
 *   - everywhere else it is the runtime's own function, untouched: the one
 *     the calling object's dependencies define (two runtime majors can share
 *     a process, as PyTorch's and CuPy's), else the next one after safepin.
 *     The calling object is the one the return address lies in: a library
 *     that tail-calls cudaHostUnregister is taken for its own caller (with
 *     one runtime loaded, the usual case, that makes no difference).
 * A statically linked runtime (nvcc's default) binds this call inside the
 * executable, where no preload library can see it (README, limits).
 */
#include "cuda_hooks.h"
#include "cuda_real.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>

extern __thread int sp_tls_in_hostfn __attribute__((tls_model("initial-exec")));

typedef void *(*dlsym_fn)(void *, const char *);
dlsym_fn sp_real_dlsym(void);

typedef int (*unreg_fn)(void *);

enum { CUDA_ERROR_INITIALIZATION = 3 }; /* cudaErrorInitializationError */

static int ours(void *fn)
{
    Dl_info a, b;
    return fn && dladdr(fn, &a) && dladdr((void *)&sp_cudart_host_unregister, &b) &&
           a.dli_fbase == b.dli_fbase;
}

/* The definition the object at base (named path) sees among its own
 * dependencies, or NULL. dlopen with RTLD_NOLOAD only finds what is loaded. */
static unreg_fn of_object(const char *path)
{
    dlsym_fn real_dlsym = sp_real_dlsym();
    void *h = path && path[0] && real_dlsym ? dlopen(path, RTLD_LAZY | RTLD_NOLOAD) : NULL;
    if (!h)
        return NULL;
    void *fn = real_dlsym(h, "cudaHostUnregister");
    dlclose(h);
    return ours(fn) ? NULL : (unreg_fn)fn;
}

/* The runtime function the caller meant, remembered per calling object. */
static unreg_fn real_for(void *caller)
{
    enum { SLOTS = 8 };
    static struct {
        void *base;
        unreg_fn fn;
    } seen[SLOTS];
    static unsigned next;
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    Dl_info di;
    if (!caller || !dladdr(caller, &di))
        di.dli_fbase = NULL, di.dli_fname = NULL;
    pthread_mutex_lock(&mu);
    for (unsigned i = 0; i < SLOTS; i++)
        if (seen[i].fn && seen[i].base == di.dli_fbase) {
            unreg_fn fn = seen[i].fn;
            pthread_mutex_unlock(&mu);
            return fn;
        }
    pthread_mutex_unlock(&mu);
    unreg_fn fn = of_object(di.dli_fname);
    if (!fn)
        fn = (unreg_fn)SP_CU_REAL(cudaHostUnregister);
    if (!fn || ours((void *)fn))
        return NULL;
    pthread_mutex_lock(&mu);
    seen[next % SLOTS].base = di.dli_fbase;
    seen[next % SLOTS].fn = fn;
    next++;
    pthread_mutex_unlock(&mu);
    return fn;
}

int sp_cudart_host_unregister(void *p, void *caller)
{
    if (sp_tls_in_hostfn && sp_cu_active()) {
        sp_cu_via_runtime = 1;
        sp_CUresult e = sp_cu_host_unregister(p);
        sp_cu_via_runtime = 0;
        return (int)e; /* the runtime's codes equal the driver's here: 0, 1, 713, 800 */
    }
    unreg_fn real = real_for(caller);
    return real ? real(p) : CUDA_ERROR_INITIALIZATION;
}
