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
#include "streams.h"
#include "util.h"

/* The exported shim for a hooked HIP name, or NULL (shims.c). */
void *sp_shim_for(const char *name);

/* dlsym on a handle: hooked HIP names resolve to the shims (reach.c).
 * caller: the return address of the program's dlsym call. */
void *sp_dlsym(void *handle, const char *name, void *caller);

#endif
