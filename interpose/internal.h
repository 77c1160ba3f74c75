/*
 * internal.h - shared by the files of interpose/ only.
 */
#ifndef SAFEPIN_INTERPOSE_INTERNAL_H
#define SAFEPIN_INTERPOSE_INTERNAL_H

#include "api_error.h"
#include "backend.h"
#include "diag.h"
#include "interpose.h"
#include "options.h"
#include "reaper.h"
#include "registry.h"
#include "streams.h"
#include "util.h"

/* How deep the calling thread is inside safepin's HIP hooks (shims.c). A
 * signal handler that interrupts a hook may call exit(); the hook may then
 * hold safepin's lock or a runtime lock that the reaper is waiting for, so
 * the exit path must neither take them nor wait for the reaper (init.c). */
extern __thread int sp_tls_in_hook __attribute__((tls_model("initial-exec")));

/* The exported shim for a hooked HIP name, or NULL (shims.c). */
void *sp_shim_for(const char *name);

/* dlsym on a handle: hooked HIP names resolve to the shims (reach.c).
 * caller: the return address of the program's dlsym call. */
void *sp_dlsym(void *handle, const char *name, void *caller);

/* dlvsym (dlvsym.c): the shim for a look-up whose answer safepin hooks, or
 * NULL (then glibc's own dlvsym, sp_dlvsym_pass, answers the caller).
 * caller: the return address of the program's dlvsym call. */
void *sp_dlvsym_shim(void *handle, const char *name, const char *version, void *caller);

#endif
