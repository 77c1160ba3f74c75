/*
 * internal.h - shared by the files of interpose/ only.
 */
#ifndef SAFEPIN_INTERPOSE_INTERNAL_H
#define SAFEPIN_INTERPOSE_INTERNAL_H

#include "backend.h"
#include "diag.h"
#include "interpose.h"
#include "options.h"
#include "reaper.h"
#include "registry.h"

extern __thread int sp_tls_in_hostfn __attribute__((tls_model("initial-exec")));

/* How deep the calling thread is inside safepin's HIP hooks (shims.c). A
 * signal handler that interrupts a hook may call exit(); the hook may then
 * hold safepin's lock or a runtime lock that the reaper is waiting for, so
 * the exit path must neither take them nor wait for the reaper (init.c). */
extern __thread int sp_tls_in_hook __attribute__((tls_model("initial-exec")));

/* A real HIP function, resolved again if the runtime arrived late (dlopen
 * with RTLD_GLOBAL). NULL if there is still none. */
#define SP_REAL_HIP(name) \
    (sp_real.name ? sp_real.name : (sp_resolve_backend(), sp_real.name))


/* dlsym(RTLD_NEXT, name) relative to safepin, whatever dlsym is exported. */
void *sp_next_symbol(const char *name);

/* The exported shim for a hooked HIP name, or NULL (shims.c). */
void *sp_shim_for(const char *name);

#endif
