/*
 * mem_int.h - shared by the files of the libc hooks' logic only (their
 * shims are in shims.c):
 *   mem_free.c      free and realloc: malloc blocks; libc's free and
 *                   realloc before sp_init, and libc's own for the core
 *   mem_mappings.c  munmap, mremap, madvise, fixed mmap, shmdt, and what
 *                   the kernel refuses of them unseen (sp_mem_fault)
 *   mem_claim.c     freed-while-registered: the registrations a call
 *                   gives up, and what is said of them
 *   proc_maps.c     the process's mappings (/proc/self/maps) and the
 *                   holes of a span, filled with placeholders
 *
 * With nothing registered each hook is one predictable branch
 * (sp_reg_empty) before the real function. Otherwise a lock-free address
 * filter (sp_reg_maybe), then a lookup under the lock. Memory hooks never
 * initialize the library and work before the real functions are resolved.
 *
 * What each call does over registered memory (G2, G7):
 *   - a call the kernel refuses (length 0, misaligned address, a range it
 *     rejects) goes straight to the kernel, which answers; no registration
 *     changes;
 *   - free, realloc, munmap: the memory the program gives up releases the
 *     registrations there (freed-while-registered) and is kept alive until
 *     their releases complete: the call is deferred, the caller sees
 *     success at once (munmap unmaps at once the pages no registration
 *     covers);
 *   - fixed mmap, mremap, shmdt, madvise(DONTNEED|FREE|REMOVE),
 *     MAP_FIXED_NOREPLACE: their effect is seen at once, so they wait for
 *     the releases and deferred unmaps there, then make the real call.
 *     Inside a host function waiting could wait for that host function
 *     itself (G8): there they never wait; the deferred unmaps in their way
 *     run at once, and the real call follows.
 */
#ifndef SAFEPIN_INTERPOSE_MEM_INT_H
#define SAFEPIN_INTERPOSE_MEM_INT_H

#include "internal.h"
#include "ownstack.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

/* safepin's own code calls: under the process lock, or on safepin's stack
 * (util/ownstack.h, where libc's own frees come from the report's stdio).
 * They pass through. */
__attribute__((no_sanitize_address)) static inline int sp_self(void)
{
    return sp_lock_held() || sp_ownstack_held();
}

#define LIKELY(x) __builtin_expect(!!(x), 1)

/* The paths taken before sp_init (and possibly while a sanitizer runtime
 * preloaded after safepin initializes) are not instrumented. */
#define SP_EARLY __attribute__((no_sanitize_address))

/* libc's mapping calls, or the system call itself before sp_init resolved
 * them. */
SP_EARLY static inline int real_munmap(void *a, size_t n)
{
    if (sp_real.munmap)
        return sp_real.munmap(a, n);
    return (int)syscall(SYS_munmap, a, n);
}

SP_EARLY static inline int real_madvise(void *a, size_t n, int advice)
{
    if (sp_real.madvise)
        return sp_real.madvise(a, n, advice);
    return (int)syscall(SYS_madvise, a, n, advice);
}

SP_EARLY static inline void *real_mmap(void *a, size_t n, int prot, int flags, int fd, off_t off)
{
    if (sp_real.mmap)
        return sp_real.mmap(a, n, prot, flags, fd, off);
    return (void *)syscall(SYS_mmap, a, n, prot, flags, fd, off);
}

SP_EARLY static inline void *real_mremap(void *old, size_t os, size_t ns, int flags, void *na)
{
    if (sp_real.mremap)
        return sp_real.mremap(old, os, ns, flags, na);
    return (void *)syscall(SYS_mremap, old, os, ns, flags, na);
}

SP_EARLY static inline int real_shmdt(const void *a)
{
    if (sp_real.shmdt)
        return sp_real.shmdt(a);
    return (int)syscall(SYS_shmdt, a);
}

/* The lock, for a hook of the program's memory calls: no thread of
 * safepin's starts while it is held here (sp_reaper_mem_hook). */
static inline void mem_lock(void)
{
    sp_lock();
    sp_reaper_mem_hook(1);
}

static inline void mem_unlock(void)
{
    sp_reaper_mem_hook(0);
    sp_unlock();
}

/* Lock held. Waiting for a release inside a host function would wait
 * behind that host function itself (G8), and during the thread's own
 * capture it could wait for that capture's end: the memory hooks never
 * wait there. */
static inline int may_wait(void) { return !sp_tls_in_hostfn && !sp_streams_thread_captures(); }

/* ---- mem_claim.c: freed-while-registered --------------------------------- */

typedef struct claim_ctx {
    const char *what;
    uintptr_t addr;
    size_t len;
    int block;      /* a malloc block: G7's rule says which ranges it frees */
    int live_only;  /* count LIVE ranges it would claim (and claim none) */
    int n;
    sp_site *site;
    /* The diagnostics wait until the caller has made the real call
     * (sp_claim_quiet/sp_claim_say): see sp_munmap. */
    int quiet;
    int n_quiet;
    uintptr_t quiet_base[8];
    unsigned char quiet_part[8];
    /* munmap: a LIVE range is given up only with its base (see claim_one) */
    int base_only;
} claim_ctx;

int sp_claim(uintptr_t addr, size_t len, const char *what, int block, int base_only);
void sp_claim_quiet(claim_ctx *c, uintptr_t addr, size_t len, const char *what);
void sp_claim_say(claim_ctx *c);
int sp_live_in(uintptr_t addr, size_t len, int block);

/* ---- proc_maps.c: the process's mappings, the holes of a span ------------ */

typedef struct vma {
    uintptr_t start, end;
    uintptr_t offset; /* in the file mapped */
    unsigned long inode;
    int shared;
    int sysv; /* a SysV shared-memory segment */
} vma;

/* Each mapping in address order to fn, until it returns nonzero (returned);
 * -1 if the mappings cannot be read. */
int sp_maps_walk(int (*fn)(const vma *v, void *arg), void *arg);

/* sp_maps_walk's callback for the mapping containing a. */
typedef struct find_ctx {
    uintptr_t a;
    vma v;
    int found;
} find_ctx;

int sp_find_vma(const vma *v, void *arg);

/* The SysV segment attached at a, as the kernel's shmdt finds it: the
 * first segment mapping at or above a whose offset in the segment is its
 * distance from a, then every mapping of that segment placed the same way
 * (sp_maps_walk's callback). */
typedef struct shm_ctx {
    uintptr_t a, end;
    unsigned long inode;
    int found;
} shm_ctx;

int sp_find_shm(const vma *v, void *arg);

/* Placeholders in the holes of a span (proc_maps.c says why). */
#define SP_HOLES 16

typedef struct holes {
    int n;
    uintptr_t at[SP_HOLES];
    size_t len[SP_HOLES];
} holes;

void sp_fill_holes(uintptr_t a, size_t len, holes *h);
void sp_unfill_holes(const holes *h);

#endif
