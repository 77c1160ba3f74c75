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

/* sp_tls_in_hook (api_error.h): how deep the calling thread is inside
 * safepin's hooks. A signal handler that interrupts a hook may call exit();
 * the hook may then hold safepin's lock or a runtime lock that the reaper
 * is waiting for, so the exit path must neither take them nor wait for the
 * reaper (init.c). */

/* dlsym on a handle: hooked HIP names resolve to the shims (reach.c).
 * caller: the return address of the program's dlsym call. */
void *sp_dlsym(void *handle, const char *name, void *caller);

/* dlvsym (dlvsym.c): the shim for a look-up whose answer safepin hooks, or
 * NULL (then glibc's own dlvsym, sp_dlvsym_pass, answers the caller).
 * caller: the return address of the program's dlvsym call. */
void *sp_dlvsym_shim(void *handle, const char *name, const char *version, void *caller);

#endif
