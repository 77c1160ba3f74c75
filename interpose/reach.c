/*
 * reach.c - programs that reach the runtime through dlopen + dlsym(handle)
 * (Python ctypes, Julia) bypass LD_PRELOAD: dlsym on a handle returns the
 * runtime's own function. safepin's dlsym asks each face (face.h) for its
 * shim of the name instead; the face completes its table of real functions
 * from that handle (the runtime may be loaded RTLD_LOCAL, out of
 * RTLD_NEXT's reach). A runtime's own procedure-address call
 * (hipGetProcAddress, cuGetProcAddress) is its face's.
 *
 * RTLD_NEXT is relative to the caller; a call through this shim would make
 * safepin the caller, so RTLD_NEXT lookups are redone from the caller's
 * object: the first object after it in load order that defines the name.
 */
#include "internal.h"

#include "face.h"

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
    /* A name a face hooks: give the program its shim. */
    const sp_face *faces[SP_FACES_MAX];
    for (int i = 0, n = sp_faces(faces, SP_FACES_MAX); i < n; i++) {
        void *shim = faces[i]->dlsym ? faces[i]->dlsym(handle, name, p) : NULL;
        if (shim) {
            (void)dlerror(); /* completing a table may miss names: the program's call succeeded */
            return shim;
        }
    }
    return p;
}
