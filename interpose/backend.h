/*
 * backend.h - the real functions of libc and of HIP.
 *
 * sp_real holds a pointer per entry of hip/hip.inc and per libc hook of
 * libc.inc (slots.inc lists them). real.c, next to it, fills
 * it with dlsym(RTLD_NEXT) once; unit tests fill it with whatever they test
 * against (simhip, or fakes). The CUDA face has its own (cuda_real.h); the
 * core sees neither (it reaches libc through util's sp_libc_*, a runtime
 * through its table).
 *
 * Dependencies: diag/ (the resolver logs). Callers: interpose/, hip/.
 */
#ifndef SAFEPIN_BACKEND_H
#define SAFEPIN_BACKEND_H

#include <stddef.h>
#include <sys/types.h>
#include <hip/hip_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The need column of slots.inc, as a value (SP_KIND_##need). */
enum sp_real_kind { SP_KIND_REQ, SP_KIND_OPT, SP_KIND_LIBC };

typedef struct sp_backend {
#define SP_REAL(kind, ret, name, params) ret (*name) params;
#include "slots.inc"
#undef SP_REAL
} sp_backend;

extern sp_backend sp_real;

/* Resolve the backend with dlsym(RTLD_NEXT). Fatal (abort with a clear
 * message) only if a lookup returns safepin's own shim. */
void sp_resolve_backend(void);

/* A real HIP function, resolved again if the runtime arrived late (dlopen
 * with RTLD_GLOBAL). NULL if there is still none. */
#define SP_REAL_HIP(name) \
    (sp_real.name ? sp_real.name : (sp_resolve_backend(), sp_real.name))

/* glibc's own dlsym (safepin exports a dlsym of its own), and
 * dlsym(RTLD_NEXT, name) relative to safepin through it. */
typedef void *(*dlsym_fn)(void *, const char *);
dlsym_fn sp_real_dlsym(void);
/* The same, for interpose/shims.c's dlsym jump (hidden; called from asm). */
__attribute__((visibility("hidden"))) dlsym_fn sp_dlsym_resolve_real(void);
/* glibc's own function name (one safepin exports too: dlsym, dlvsym,
 * dlclose), resolved once into *slot (GLIBC_2.34, else GLIBC_2.2.5, else
 * the default version), read from libc's symbol table without dlvsym. */
__attribute__((visibility("hidden"))) void *sp_glibc_fn(void **slot, const char *name);
/* glibc's name@GLIBC_2.34, else name@GLIBC_2.2.5, or NULL: not cached. */
__attribute__((visibility("hidden"))) void *sp_glibc_versioned(const char *name);
/* glibc's dlvsym: the exact one the dlvsym hook calls (@GLIBC_2.34, else
 * @GLIBC_2.2.5; NULL if libc has neither: nothing is handed out then), and
 * the one the export passes through to (that one, else the default
 * version; NULL only if libc has no dlvsym at all). sp_dlvsym_hooked: 1
 * when the exact one exists. */
void *sp_glibc_dlvsym(void);
void *sp_dlvsym_pass(void);
int sp_dlvsym_hooked(void);
void *sp_next_symbol(const char *name);

/* The runtime's entries of the table (every kind but LIBC): the first one
 * set, or NULL; forget them all (the runtime was unloaded); fill the empty
 * ones from a dlopen handle (a runtime loaded RTLD_LOCAL). */
void *sp_backend_any_runtime_fn(void);
void sp_backend_forget_runtime(void);
void sp_backend_fill_from(void *handle);
/* Set the entry called name, if it is empty, to fn (hipGetProcAddress). */
void sp_backend_fill_one(const char *name, void *fn);
/* The same without safepin's lock, for the dlvsym hook (which takes none):
 * the empty HIP entries from handle (a real handle, not RTLD_DEFAULT or
 * RTLD_NEXT), then the entry called name, if still empty, to fn. Each slot
 * is set once, atomically, from empty. */
void sp_backend_offer(void *handle, const char *name, void *fn);


#ifdef __cplusplus
}
#endif
#endif
