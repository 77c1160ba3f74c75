/*
 * cuda_procaddr.c - handing out the shims where CUDA programs look the
 * driver up: cuGetProcAddress / cuGetProcAddress_v2 and dlsym(handle).
 *
 * cudart (static and shared) dlopens libcuda.so.1, takes cuGetProcAddress_v2
 * with dlsym(handle), asks it for "cuGetProcAddress" at 11030 and 12000,
 * then looks up every entry point by base name, version and flags
 * (CUDA-NOTES.md). So:
 *   - dlsym(handle, name) of a hooked name returns its shim (and completes
 *     sp_cu from that handle); nothing else happens inside dlsym: no
 *     initialization, no lock, no driver call;
 *   - cuGetProcAddress asks the real driver with the exact name, version
 *     and flags, then identifies what it answered by the exact symbol dladdr
 *     names for that pointer: a hooked symbol gets its shim, anything else
 *     passes through untouched. No version is ever guessed.
 *   - dlvsym(handle, name, version) answered by the driver with a hooked
 *     name's function: the same hand-out (interpose/dlvsym.c decides);
 *   - asked for "cuGetProcAddress" itself, the answer is safepin's own shim
 *     of the right form: 4 arguments below 12000, 5 from 12000.
 */
#include "cuda_hooks.h"
#include "cuda_real.h"
#include "api_error.h"
#include "diag.h"

#include <dlfcn.h>
#include <string.h>

/* The exact symbol fn is, if dladdr can say. */
static const char *symbol_of(void *fn)
{
    Dl_info di;
    if (!fn || !dladdr(fn, &di) || !di.dli_sname || di.dli_saddr != fn)
        return NULL;
    return di.dli_sname;
}

/* The shim to hand out for the driver's answer fn to a look-up of sym, or
 * NULL to pass fn through. */
static void *shim_for_answer(const char *sym, void *fn, int version)
{
    const char *name = symbol_of(fn);
    void *shim = name ? sp_cuda_shim_for(name) : NULL;
    if (shim) {
        sp_cu_offer(name, fn); /* the real one, if the table had none */
        return shim;
    }
    if (strcmp(sym, "cuGetProcAddress") == 0) {
        /* A driver whose symbols dladdr cannot name: the form is fixed by
         * the version asked (cuda.h: _v2 from 12000). */
        const char *form = version >= 12000 ? "cuGetProcAddress_v2" : "cuGetProcAddress";
        sp_cu_offer(form, fn);
        return sp_cuda_shim_for(form);
    }
    return NULL;
}

sp_CUresult sp_cu_get_proc_address(const char *sym, void **pfn, int version, uint64_t flags,
                                   int *status, int five_args)
{
    /* No sp_cu_enter: look-ups come before cuInit and must not initialize. */
    sp_CUresult e;
    /* A name the driver lacks (at that version, cudart's "" probe) is a
     * look-up's answer, not an api-error; a NULL symbol or output is. */
    if (sym && pfn)
        sp_api_probe();
    if (five_args) {
        if (!SP_CU_REAL(cuGetProcAddress_v2))
            return SP_CUDA_ERROR_NOT_INITIALIZED;
        e = sp_cu.cuGetProcAddress_v2(sym, pfn, version, flags, status);
    } else {
        if (!SP_CU_REAL(cuGetProcAddress))
            return SP_CUDA_ERROR_NOT_INITIALIZED;
        e = sp_cu.cuGetProcAddress(sym, pfn, version, flags);
    }
    if (e != SP_CUDA_SUCCESS || !sym || !pfn || !*pfn) {
        SP_TRACE("cuGetProcAddress%s(\"%s\", %d, flags %lu) = %d", five_args ? "_v2" : "",
                 sym ? sym : "(null)", version, (unsigned long)flags, (int)e);
        return e;
    }
    void *shim = shim_for_answer(sym, *pfn, version);
    SP_TRACE("cuGetProcAddress%s(\"%s\", %d, flags %lu) = %p (%s): %s", five_args ? "_v2" : "", sym,
             version, (unsigned long)flags, *pfn, symbol_of(*pfn) ? symbol_of(*pfn) : "no symbol",
             shim ? "safepin's shim" : "passed through");
    if (shim)
        *pfn = shim;
    return e;
}

void *sp_cuda_dlsym(void *handle, const char *name, void *p)
{
    if (!name || name[0] != 'c' || name[1] != 'u')
        return NULL;
    void *shim = sp_cuda_shim_for(name);
    if (!shim || shim == p)
        return NULL;
    sp_cu_complete_from(handle);
    return shim;
}

void *sp_cuda_dlvsym(void *handle, const char *name, void *p)
{
    /* The runtime's cudaHostUnregister (cudart.c) forwards to the runtime
     * its caller links, not to p: with two runtimes loaded that could be
     * another function than the one asked for, so its answer passes
     * through. Driver names ("cuX...") are handed out. */
    if (strncmp(name, "cuda", 4) == 0)
        return NULL;
    void *shim = sp_cuda_shim_for(name);
    if (!shim || shim == p)
        return NULL;
    /* The table from the handle; a driver in the global scope is what
     * RTLD_NEXT from safepin finds. */
    sp_cu_complete_from(handle != RTLD_DEFAULT && handle != RTLD_NEXT ? handle : RTLD_NEXT);
    sp_cu_offer(name, p); /* the real one, if the table had none */
    return shim;
}
