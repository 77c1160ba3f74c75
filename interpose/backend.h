/*
 * backend.h - libc's real functions, and glibc's own dlsym for the
 * process layer's look-ups and the faces'.
 *
 * sp_real holds a pointer per libc hook of libc.inc (slots.inc lists
 * them). real.c, next to it, fills it with dlsym(RTLD_NEXT) once; unit
 * tests set entries to whatever they test against. Each face keeps its
 * runtime's functions in a table of its own (hip/hip_real.h,
 * cuda/cuda_real.h), resolved through sp_next_real; the core sees none of
 * them (it reaches libc through util's sp_libc_*, a runtime through its
 * table).
 *
 * Dependencies: none beyond libc. Callers: interpose/, the faces.
 */
#ifndef SAFEPIN_BACKEND_H
#define SAFEPIN_BACKEND_H

#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sp_backend {
#define SP_REAL(ret, name, params) ret (*name) params;
#include "slots.inc"
#undef SP_REAL
} sp_backend;

extern sp_backend sp_real;

/* Resolve libc's functions with dlsym(RTLD_NEXT) (sp_next_real). */
void sp_resolve_backend(void);

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

/* dlsym(RTLD_NEXT, name), for a table of real functions: fatal (abort
 * with a clear message) only if it returns safepin's own shim (the
 * library loaded twice, or linked into the program). */
void *sp_next_real(const char *name);

#ifdef __cplusplus
}
#endif
#endif
