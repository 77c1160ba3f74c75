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

/* 1 when free() reaches glibc's allocator (real.c sets it once libc's
 * functions are resolved): a block's chunk header then bounds its extent,
 * which the free and realloc exports read instead of calling
 * malloc_usable_size. */
extern int sp_libc_chunks;

/* With ranges registered: 1 if the block p cannot overlap any of them, so
 * libc may free (or resize) it at once; 0: ask sp_free. Inline in the
 * exports: a load of the block's size word (glibc reads it first thing
 * too), the filter's two loads. The bound is the chunk's size, at least
 * the block's (an mmapped chunk's size counts its header too). */
__attribute__((no_sanitize_address, no_sanitize_thread)) static inline int
sp_block_unrelated(const void *p)
{
    if (!p)
        return 1;
    if (!__atomic_load_n(&sp_libc_chunks, __ATOMIC_RELAXED))
        return 0;
    size_t n = ((const size_t *)p)[-1] & ~(size_t)7;
    return !sp_reg_maybe((uintptr_t)p, n);
}

/* dlsym on a handle: hooked names resolve to their face's shims (reach.c).
 * caller: the return address of the program's dlsym call. */
void *sp_dlsym(void *handle, const char *name, void *caller);

/* dlvsym (dlvsym.c): the shim for a look-up whose answer safepin hooks, or
 * NULL (then glibc's own dlvsym, sp_dlvsym_pass, answers the caller).
 * caller: the return address of the program's dlvsym call. */
void *sp_dlvsym_shim(void *handle, const char *name, const char *version, void *caller);

#endif
