/*
 * cuda_face.c - what the process layer (interpose/) needs of the CUDA
 * driver face, registered in the face table (face.h): its start, the
 * driver names it hands out through dlsym and dlvsym (cuda_procaddr.c;
 * cuGetProcAddress is its own export), what cudaHostUnregister's call
 * sites reached, forgotten at each dlclose (cudart.c), and the driver that
 * stays loaded.
 */
#include "cuda_hooks.h"
#include "cuda_real.h"
#include "backend.h"
#include "face.h"

#include <dlfcn.h>
#include <link.h>

/* The CUDA driver safepin calls stays loaded for the life of the process:
 * sp_cu's slots are filled once and never cleared (a shim may be reading
 * one at any time), and held releases run long after the program's last
 * driver call. So the program's dlclose of that driver leaves it mapped
 * through a reference of safepin's own, taken once; the program's own
 * reference is dropped as it asked. 1 if handle is that driver. */
static int keep_cuda_driver(void *handle)
{
    static void *keep; /* set once, atomically */
    void *fn = (void *)sp_cu.cuMemHostUnregister;
    struct link_map *hm = NULL, *cm = NULL;
    Dl_info di;
    if (!fn || !dladdr1(fn, &di, (void **)&cm, RTLD_DL_LINKMAP) || !cm ||
        dlinfo(handle, RTLD_DI_LINKMAP, &hm) != 0 || hm != cm) {
        (void)dlerror();
        return 0;
    }
    Lmid_t ns = LM_ID_BASE; /* a driver dlmopen()ed: the reference in its namespace */
    if (dlinfo(handle, RTLD_DI_LMID, &ns) != 0)
        ns = LM_ID_BASE;
    /* Taken outside safepin's lock (the loader's is taken); one is kept. */
    void *ref = __atomic_load_n(&keep, __ATOMIC_ACQUIRE) ? NULL
                                                          : dlmopen(ns, cm->l_name, RTLD_LAZY | RTLD_NOLOAD);
    void *none = NULL;
    static void *real_dlclose;
    if (ref && !__atomic_compare_exchange_n(&keep, &none, ref, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        ((int (*)(void *))sp_glibc_fn(&real_dlclose, "dlclose"))(ref); /* another's is kept */
    (void)dlerror();
    return 1;
}

static const sp_face cuda_face = {
    .name = "CUDA",
    .order = SP_RT_CUDA,
    .prefix = "cu",
    .init = sp_cuda_face_init,
    .shim_for = sp_cuda_shim_for,
    .dlsym = sp_cuda_dlsym,
    .dlvsym = sp_cuda_dlvsym,
    .forget = sp_cudart_forget,
    .keep_loaded = keep_cuda_driver,
};
SP_FACE(cuda_face);
