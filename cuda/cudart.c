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
 *   - each call goes to the definition the caller meant: the one the
 *     calling object's dependencies define (two runtime majors can share a
 *     process, as PyTorch's and CuPy's), else the next one after safepin,
 *     else the one the program's dlsym on a runtime's handle last answered
 *     (a runtime loaded RTLD_LOCAL, as ctypes does). The calling object is
 *     the one the return address lies in: a library that tail-calls
 *     cudaHostUnregister is taken for its own caller (with one runtime
 *     loaded, the usual case, that makes no difference). Never the caller's
 *     own definition, nor one this thread is inside already: a wrapper of
 *     the runtime (an API tracer) that reaches safepin's on its way there
 *     is not called back;
 *   - inside a host function that safepin runs (the runtime enqueues them
 *     through the hooked cuLaunchHostFunc and cuStreamAddCallback), a call
 *     meant for NVIDIA's runtime (libcudart.so*), or for none that safepin
 *     can find, is safepin's deferred unregister (G8) and never reaches the
 *     runtime; a definition of that name in any other object (a test
 *     double, a wrapper) is called as it would be without safepin.
 * The definition found for a call site is remembered until the next
 * dlclose: the program may dlclose a runtime and load another object where
 * it was, and a pointer kept from before would call into that object.
 * A statically linked runtime (nvcc's default) binds this call inside the
 * executable, where no preload library can see it (docs/limits.md, CUDA).
 */
#include "cuda_hooks.h"
#include "cuda_real.h"
#include "backend.h"
#include "lock.h"

#include <dlfcn.h>
#include <link.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

extern __thread int sp_tls_in_hostfn __attribute__((tls_model("initial-exec")));

typedef void *(*dlsym_fn)(void *, const char *);
dlsym_fn sp_real_dlsym(void);
void *sp_next_symbol(const char *name);

typedef int (*unreg_fn)(void *);

enum { CUDA_ERROR_INITIALIZATION = 3 }; /* cudaErrorInitializationError */

static const char NAME[] = "cudaHostUnregister";

static int ours(void *fn)
{
    Dl_info a, b;
    return fn && dladdr(fn, &a) && dladdr((void *)&sp_cudart_host_unregister, &b) &&
           a.dli_fbase == b.dli_fbase;
}

/* The definition that the loaded object named path sees among its own
 * dependencies, or NULL (also when path is not loaded now: RTLD_NOLOAD). */
static unreg_fn in_scope_of(const char *path)
{
    dlsym_fn real_dlsym = sp_real_dlsym();
    void *h = path && path[0] && real_dlsym ? dlopen(path, RTLD_LAZY | RTLD_NOLOAD) : NULL;
    if (!h)
        return NULL;
    void *fn = real_dlsym(h, NAME);
    static void *real_dlclose;
    ((int (*)(void *))sp_glibc_fn(&real_dlclose, "dlclose"))(h); /* not the hook: no forget */
    return ours(fn) ? NULL : (unreg_fn)fn;
}

/* The runtime whose handle the program's dlsym last asked for this name
 * (sp_cudart_offer), by path: looked up again at each use, so a runtime
 * closed since is never called. Guarded by sp_lock. */
static char offered[PATH_MAX];

void sp_cudart_offer(void *fn)
{
    Dl_info di;
    if (!fn || ours(fn) || !dladdr(fn, &di) || !di.dli_fname || !di.dli_fname[0] ||
        strlen(di.dli_fname) >= sizeof(offered))
        return;
    sp_lock();
    snprintf(offered, sizeof(offered), "%s", di.dli_fname);
    sp_unlock();
    sp_cudart_forget(); /* look_up may answer otherwise now */
}

static unreg_fn of_offered(void)
{
    char path[PATH_MAX];
    sp_lock();
    snprintf(path, sizeof(path), "%s", offered);
    sp_unlock();
    return in_scope_of(path);
}

/* The definitions this thread is calling through safepin's, innermost
 * last: a wrapper that defines cudaHostUnregister and reaches safepin's on
 * its way to the runtime (dlsym(RTLD_NEXT) from a library preloaded before
 * safepin, or dlsym on the runtime's handle, which hands out safepin's) is
 * never called back, or each would call the other until the stack ran out.
 * A wrapper that tail-calls safepin's leaves no return address of its own,
 * so the calling object alone cannot tell. */
enum { ACTIVE_MAX = 4 };
static __thread unreg_fn tls_active[ACTIVE_MAX] __attribute__((tls_model("initial-exec")));
static __thread int tls_nactive __attribute__((tls_model("initial-exec")));

/* 1 if this thread is inside fn already (through safepin's). */
static int active(unreg_fn fn)
{
    for (int i = 0; i < tls_nactive && i < ACTIVE_MAX; i++)
        if (tls_active[i] == fn)
            return 1;
    return 0;
}

/* fn, unless this thread is inside it already, or it lies in the calling
 * object (at base) itself: the wrapper that called, kept in *own as the last
 * resort (a library that calls its own definition through safepin's). */
static unreg_fn not_from(unreg_fn fn, void *base, unreg_fn *own)
{
    Dl_info di;
    if (!fn || active(fn))
        return NULL;
    if (base && dladdr((void *)fn, &di) && di.dli_fbase == base) {
        if (!*own)
            *own = fn;
        return NULL;
    }
    return fn;
}

/* The definition the object lm (at base) meant, or NULL. The executable's
 * own scope is the global one, where safepin comes first: the next one
 * after it. */
static unreg_fn look_up(struct link_map *lm, void *base)
{
    unreg_fn own = NULL;
    unreg_fn fn = lm && lm->l_name ? not_from(in_scope_of(lm->l_name), base, &own) : NULL;
    if (!fn) {
        void *next = sp_next_symbol(NAME);
        fn = ours(next) ? NULL : not_from((unreg_fn)next, base, &own);
    }
    if (!fn)
        fn = not_from(of_offered(), base, &own);
    if (!fn)
        fn = own;
    (void)dlerror(); /* the program's dlerror() answers for its own calls only */
    return fn;
}

/* 1 if fn is NVIDIA's shared runtime's (its file is libcudart.so*). */
static int is_nvidia_runtime(unreg_fn fn)
{
    Dl_info di;
    if (!fn || !dladdr((void *)fn, &di) || !di.dli_fname)
        return 0;
    const char *base = strrchr(di.dli_fname, '/');
    base = base ? base + 1 : di.dli_fname;
    return strncmp(base, "libcudart.so", strlen("libcudart.so")) == 0;
}

typedef struct target {
    unreg_fn fn;
    int nvidia; /* is_nvidia_runtime(fn) */
} target;

static target resolve(void *caller)
{
    Dl_info di;
    struct link_map *lm = NULL;
    if (!caller || !dladdr1(caller, &di, (void **)&lm, RTLD_DL_LINKMAP))
        di.dli_fbase = NULL, lm = NULL;
    target t = {look_up(lm, di.dli_fbase), 0};
    t.nvidia = is_nvidia_runtime(t.fn);
    return t;
}

/* What resolve answered for each call site (return address) since the
 * last dlclose (gen, bumped by sp_cudart_forget): a hit makes no call into
 * the loader, whose lock a forked child may have inherited held (another
 * thread of the parent was inside it), and a runtime unloaded since is
 * never called. Guarded by sp_lock, except gen. */
enum { SLOTS = 16 };
static struct {
    void *site;
    target t;
} seen[SLOTS];
static unsigned next_slot, seen_gen;
static unsigned gen;

void sp_cudart_forget(void) { __atomic_add_fetch(&gen, 1, __ATOMIC_ACQ_REL); }

/* The definition the caller meant (fn NULL: none). */
static target target_for(void *caller)
{
    if (tls_nactive > 0)
        return resolve(caller); /* the answer depends on the wrappers active */
    target t = {NULL, 0};
    unsigned g = __atomic_load_n(&gen, __ATOMIC_ACQUIRE);
    sp_lock();
    if (seen_gen != g) {
        memset(seen, 0, sizeof(seen));
        seen_gen = g;
    }
    for (unsigned i = 0; i < SLOTS && !t.fn; i++)
        if (seen[i].t.fn && seen[i].site == caller)
            t = seen[i].t;
    sp_unlock();
    if (t.fn)
        return t;
    t = resolve(caller);
    if (!t.fn)
        return t;
    sp_lock();
    if (seen_gen == g && __atomic_load_n(&gen, __ATOMIC_ACQUIRE) == g) {
        seen[next_slot % SLOTS].site = caller;
        seen[next_slot % SLOTS].t = t;
        next_slot++;
    }
    sp_unlock();
    return t;
}

int sp_cudart_host_unregister(void *p, void *caller)
{
    target t = target_for(caller);
    unreg_fn real = t.fn;
    if (sp_tls_in_hostfn && sp_cu_active() && (!real || t.nvidia)) {
        sp_cu_via_runtime = 1;
        sp_CUresult e = sp_cu_host_unregister(p);
        sp_cu_via_runtime = 0;
        return (int)e; /* the runtime's codes equal the driver's here: 0, 1, 713, 800 */
    }
    if (!real)
        return CUDA_ERROR_INITIALIZATION;
    int depth = tls_nactive++;
    if (depth < ACTIVE_MAX)
        tls_active[depth] = real;
    int e = real(p);
    tls_nactive--;
    return e;
}
