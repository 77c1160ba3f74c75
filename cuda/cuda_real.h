/*
 * cuda_real.h - the real CUDA driver functions (sp_cu), the CUDA face's
 * state, and what its files share.
 *
 * sp_cu holds one pointer per entry of cuda_real.inc. It is filled from
 * dlsym(RTLD_NEXT) (programs linked with -lcuda), from the handle of a
 * program's dlsym(handle, "cu...") (dlopen users: cudart, Python, Julia),
 * and from the real cuGetProcAddress's answers: whichever comes first.
 * Slots are written with atomic stores and never taken back (the driver is
 * never unloaded before exit in practice; docs/limits.md, CUDA).
 *
 * Dependencies: cuda_abi.h, the shared core (registry, reaper, diag).
 */
#ifndef SAFEPIN_CUDA_REAL_H
#define SAFEPIN_CUDA_REAL_H

#include "cuda_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sp_cu_table {
#define SP_CU(kind, ret, name, params) ret (*name) params;
#include "cuda_real.inc"
#undef SP_CU
} sp_cu_table;

extern sp_cu_table sp_cu;

/* Fill the empty slots from dlsym(RTLD_NEXT) (once per process unless
 * forced). Never calls into the driver. */
void sp_cu_resolve(int force);
/* Fill the empty slots from a program's handle on the driver. Takes no
 * lock, calls nothing but the real dlsym (it runs inside dlsym). */
void sp_cu_complete_from(void *handle);
/* The slot for name gets fn if it is empty. 1 if name is in the list. */
int sp_cu_offer(const char *name, void *fn);

/* A real function, resolved again if the driver arrived late. */
#define SP_CU_REAL(name) (sp_cu.name ? sp_cu.name : (sp_cu_resolve(1), sp_cu.name))

/* Entry of every CUDA hook: safepin initialized, the driver marked in use
 * (its ops take part in marker sets and relaxed mode from now on). */
void sp_cu_enter(void);
/* 1 once a CUDA hook ran with the driver resolved. */
int sp_cu_active(void);

/* The exported shim of a hooked CUDA name (cuda_shims.c), or NULL. */
void *sp_cuda_shim_for(const char *name);

/* The return address of the program's call into a shim (set by
 * cuda_shims.c), and what diagnostics add for it:
 * " (cudaHostUnregister)" when that came from NVIDIA's shared runtime
 * library, else "" (static cudart cannot be told from the program, and
 * runtime_call NULL names none). Every CUDA shim sets it. */
extern __thread void *sp_cu_caller;
/* Set while a hook runs for NVIDIA's runtime's own entry (cudart.c). */
extern __thread int sp_cu_via_runtime;
const char *sp_cu_entry(const char *runtime_call);

/* The calling thread's current context (NULL: none or no driver). */
sp_CUcontext sp_cu_current_ctx(void);

/* dev's primary context is ctx (the program retained it), or is gone (ctx
 * NULL): what cuda_ops.c's scan of active primary contexts remembers, so
 * that it needs no retain of its own for it. No driver call, no lock. */
void sp_cu_primary_seen(sp_CUdevice dev, sp_CUcontext ctx);

#ifdef __cplusplus
}
#endif
#endif
