/*
 * hip_face.c - what the process layer (interpose/) needs of the HIP face,
 * registered in the face table (face.h): its start (hip_ops.c), and the
 * shims it hands out for hooked HIP names through dlsym, dlvsym and
 * hipGetProcAddress, completing the HIP entries of the table of real
 * functions (sp_hip, hip_real.h) from what the program looked up, and
 * the runtime library that table lies in, for the process layer to follow
 * through a dlclose and a reload.
 */
#include "api_error.h"
#include "interpose.h"
#include "lock.h"
#include "face.h"
#include "hip.h"

#include <dlfcn.h>

static const sp_face hip_face;

/* dlsym(handle, name) answered p: a hooked HIP function from a handle. */
static void *hip_dlsym(void *handle, const char *name, void *p)
{
    void *shim = sp_shim_for(name);
    if (!shim || shim == p)
        return NULL;
    sp_face_lib_check(&hip_face);
    sp_hip_fill_from(handle); /* no lock: the loader's is taken (hip_real.h) */
    return shim;
}

/* dlvsym(handle, name, version) answered p, the runtime's default
 * definition of name. */
static void *hip_dlvsym(void *handle, const char *name, void *p)
{
    void *shim = sp_shim_for(name);
    if (!shim || shim == p)
        return NULL;
    /* A runtime found from a handle may be out of RTLD_NEXT's reach
     * (RTLD_LOCAL): the table is completed from that handle. One found in
     * the global scope is resolved by the shim's first call, from the whole
     * table (an entry set here would stop that). */
    if (handle != RTLD_DEFAULT && handle != RTLD_NEXT) {
        sp_face_lib_check(&hip_face);
        sp_hip_offer(handle, name, p);
    }
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
    hipError_t e = sp_hip.hipGetProcAddress(symbol, pfn, version, flags, status);
    if (e != hipSuccess || !pfn || !*pfn || !symbol)
        return e;
    void *shim = sp_shim_for(symbol);
    if (!shim || shim == *pfn)
        return e;
    /* Keep the runtime's function as the real one if we had none. */
    sp_lock();
    sp_hip_fill_one(symbol, *pfn);
    sp_unlock();
    *pfn = shim;
    return e;
}

/* The process has a HIP runtime once hipHostRegister is known. */
static int hip_has_runtime(void) { return __atomic_load_n(&sp_hip.hipHostRegister, __ATOMIC_RELAXED) != NULL; }

static const sp_face hip_face = {
    .name = "HIP",
    .order = SP_RT_HIP,
    .prefix = "hip",
    .init = sp_hip_face_init,
    .shim_for = sp_shim_for,
    .dlsym = hip_dlsym,
    .dlvsym = hip_dlvsym,
    .lib_fn = sp_hip_any_fn,
    .lib_forget = sp_hip_forget,
    .lib_fill = sp_hip_fill_from,
    .has_runtime = hip_has_runtime,
};
SP_FACE(hip_face);
