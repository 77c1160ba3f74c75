/*
 * core_internal.h - shared by the files of core/ only.
 */
#ifndef SAFEPIN_CORE_INTERNAL_H
#define SAFEPIN_CORE_INTERNAL_H

#include "api_error.h"
#include "diag.h"
#include "hold.h"
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

/* The note on the runtime call that reached hook c, for a message (asked
 * of the face only then: finding the caller's object costs microseconds). */
static inline const char *sp_core_via(const sp_rt_ops *o, const sp_call *c)
{
    return c->entry && o->entry_note ? o->entry_note(c->entry) : "";
}

/* The innermost range containing p, once no register of it is in flight.
 * Lock held (released while waiting). */
sp_range *sp_core_settled_containing(uintptr_t p);

#endif
