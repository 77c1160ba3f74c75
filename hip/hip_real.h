/*
 * hip_real.h - the real HIP runtime functions (sp_hip) and their resolver.
 *
 * sp_hip holds one pointer per entry of hip.inc. It is filled from
 * dlsym(RTLD_NEXT) at start and again while a slot is empty (SP_REAL_HIP:
 * a runtime the program dlopens later), from the handle of a program's
 * dlsym or dlvsym on the runtime (one loaded RTLD_LOCAL), and from the real
 * hipGetProcAddress's answers: whichever comes first. The program may
 * dlclose the runtime and load it again: the process layer follows that
 * library (interpose/dlclose.c, through the face's lib_* entries, face.h)
 * and has the table forgotten and filled again from the new instance.
 * Unit tests set slots to what they test against (simhip, or fakes).
 *
 * Dependencies: interpose/backend.h (glibc's dlsym), diag/ (the resolver
 * logs). Callers: hip/.
 */
#ifndef SAFEPIN_HIP_REAL_H
#define SAFEPIN_HIP_REAL_H

#include <stddef.h>
#include <stdint.h>
#include <hip/hip_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sp_hip_table {
#define SP_HIP(kind, need, ret, name, params, args, logic) ret (*name) params;
#include "hip.inc"
#undef SP_HIP
} sp_hip_table;

extern sp_hip_table sp_hip;

/* Fill the empty slots from dlsym(RTLD_NEXT). Fatal (abort with a clear
 * message) only if a look-up returns safepin's own shim; a runtime that
 * lacks required functions is a runtime-error warning. */
void sp_hip_resolve(void);

/* A real HIP function, resolved again if the runtime arrived late (dlopen
 * with RTLD_GLOBAL). NULL if there is still none. */
#define SP_REAL_HIP(name) (sp_hip.name ? sp_hip.name : (sp_hip_resolve(), sp_hip.name))

/* One function of the table (the first one set), naming the runtime
 * instance they belong to, or NULL; forget them all (that instance was
 * unloaded), or set each to next's (a dlopen handle of the instance loaded
 * since; no entry is empty between); fill the empty ones from a dlopen
 * handle (a runtime loaded RTLD_LOCAL), each entry set atomically from
 * empty. No lock for the last two: they take the loader's. */
void *sp_hip_any_fn(void);
void sp_hip_forget(void *next);
void sp_hip_fill_from(void *handle);
/* Set the slot called name, if it is empty, to fn (hipGetProcAddress). */
void sp_hip_fill_one(const char *name, void *fn);
/* The same without safepin's lock, for the dlvsym hook (which takes none):
 * the empty slots from handle (a real handle, not RTLD_DEFAULT or
 * RTLD_NEXT), then the slot called name, if still empty, to fn. Each slot
 * is set once, atomically, from empty. */
void sp_hip_offer(void *handle, const char *name, void *fn);

#ifdef __cplusplus
}
#endif
#endif
