/*
 * reach.c - programs that reach the runtime through dlopen + dlsym(handle)
 * (Python ctypes, Julia) bypass LD_PRELOAD: dlsym on a handle returns the
 * runtime's own function. safepin's dlsym hands back its shim for every
 * hooked HIP name instead, and completes its backend table from that handle
 * (the runtime may be loaded RTLD_LOCAL, out of RTLD_NEXT's reach).
 *
 * RTLD_NEXT is relative to the caller; a call through this shim would make
 * safepin the caller, so RTLD_NEXT lookups are redone from the caller's
 * object: the first object after it in load order that defines the name.
 */
#include "internal.h"

#include "cuda_hooks.h"

#include <dlfcn.h>
#include <link.h>
#include <string.h>

#define real_dlsym sp_real_dlsym

typedef struct next_ctx {
    uintptr_t caller_base;
    int after;
    const char *name;
    void *found;
} next_ctx;

static int find_next(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    next_ctx *c = arg;
    if (!c->after) {
        if (info->dlpi_addr == c->caller_base)
            c->after = 1;
        return 0;
    }
    void *h = dlopen(info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : NULL,
                     RTLD_LAZY | RTLD_NOLOAD);
    if (!h)
        return 0;
    void *p = real_dlsym()(h, c->name);
    dlclose(h);
    Dl_info di;
    if (p && dladdr(p, &di) && (uintptr_t)di.dli_fbase == info->dlpi_addr) {
        c->found = p;
        return 1;
    }
    return 0;
}

void *sp_dlsym(void *handle, const char *name, void *caller)
{
    dlsym_fn real = real_dlsym();
    if (!real)
        return NULL;
#if !defined(__x86_64__)
    if (handle == RTLD_NEXT) {
        /* Without the x86-64 jump shim the caller is lost: redo the lookup
         * from the caller's object. */
        Dl_info di;
        if (!caller || !dladdr(caller, &di))
            return real(handle, name);
        next_ctx c = {(uintptr_t)di.dli_fbase, 0, name, NULL};
        dl_iterate_phdr(find_next, &c);
        return c.found;
    }
#else
    (void)caller;
    (void)find_next;
#endif
    void *p = real(handle, name);
    if (!p || handle == RTLD_DEFAULT)
        return p;
    void *cu = sp_cuda_dlsym(handle, name, p); /* a CUDA driver name (cuda/) */
    if (cu) {
        (void)dlerror(); /* completing the table may miss names: the program's call succeeded */
        return cu;
    }
    void *shim = sp_shim_for(name);
    if (!shim || shim == p)
        return p;
    /* A hooked HIP function from a handle: give the program our shim. */
    sp_forget_stale_runtime();
    sp_lock();
    sp_backend_fill_from(handle);
    sp_unlock();
    (void)dlerror(); /* as above */
    return shim;
}

hipError_t sp_get_proc_address(const char *symbol, void **pfn, int version, uint64_t flags,
                               int *status)
{
    sp_init();
    if (!SP_REAL_HIP(hipGetProcAddress))
        return hipErrorNotSupported;
    /* A name the runtime lacks (at that version) is a look-up's answer, not
     * an api-error; a NULL symbol or output is. */
    if (symbol && pfn)
        sp_api_probe();
    hipError_t e = sp_real.hipGetProcAddress(symbol, pfn, version, flags, status);
    if (e != hipSuccess || !pfn || !*pfn || !symbol)
        return e;
    void *shim = sp_shim_for(symbol);
    if (!shim || shim == *pfn)
        return e;
    /* Keep the runtime's function as the real one if we had none. */
    sp_lock();
    sp_backend_fill_one(symbol, *pfn);
    sp_unlock();
    *pfn = shim;
    return e;
}
