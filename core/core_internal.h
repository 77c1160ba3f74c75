/*
 * core_internal.h - shared by the files of core/ only.
 */
#ifndef SAFEPIN_CORE_INTERNAL_H
#define SAFEPIN_CORE_INTERNAL_H

#include "api_error.h"
#include "diag.h"
#include "lock.h"
#include "options.h"
#include "reaper.h"
#include "registry.h"
#include "runtime.h"
#include "streams.h"
#include "util.h"

/* > 0 while the calling thread runs a host function of the program
 * (core/streams.c's trampolines; read everywhere: initial-exec TLS). */
extern __thread int sp_tls_in_hostfn __attribute__((tls_model("initial-exec")));

/* The innermost range containing p, once no register of it is in flight.
 * Lock held (released while waiting). */
sp_range *sp_core_settled_containing(uintptr_t p);

#endif
