/*
 * mem_free.c - free and realloc: a malloc block the program frees or
 * resizes that holds registrations is kept alive until their release (the
 * call is deferred, the caller sees success at once). Also libc's free and
 * realloc, resolved lazily when called before sp_init, and libc's own free
 * and munmap handed to the core (sp_mem_hooks_init).
 */
#include "mem_int.h"

#include <dlfcn.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

extern void *__libc_realloc(void *, size_t);

static __thread int tls_resolving __attribute__((tls_model("initial-exec")));

/* Lazily resolve a libc function the first time it is needed before
 * sp_init ran (e.g. while another preloaded runtime, such as ASan's, sets
 * itself up). NULL while a lookup is already in progress on this thread. */
SP_EARLY static void *resolve_next(const char *name)
{
    if (tls_resolving)
        return NULL;
    tls_resolving = 1;
    void *p = sp_next_symbol(name);
    tls_resolving = 0;
    return p;
}

/* Out of line, so that the common path of free() is a bare tail call. */
SP_EARLY __attribute__((noinline)) static void resolve_and_free(void *p)
{
    void (*f)(void *) = (void (*)(void *))resolve_next("free");
    if (f) {
        sp_real.free = f;
        f(p);
    }
    /* else: freed during our own symbol lookup: leaking this block is safer
     * than handing it to an allocator that may not own it. */
}

SP_EARLY static inline void real_free(void *p)
{
    void (*f)(void *) = sp_real.free;
    if (LIKELY(f != NULL))
        f(p);
    else
        resolve_and_free(p);
}

SP_EARLY static inline void *real_realloc(void *p, size_t n)
{
    void *(*f)(void *, size_t) = sp_real.realloc;
    if (!f) {
        f = (void *(*)(void *, size_t))resolve_next("realloc");
        if (!f)
            return __libc_realloc(p, n);
        sp_real.realloc = f;
    }
    return f(p, n);
}

/* libc's own, for the frees and unmaps the reaper carries out later. */
static void libc_free(void *p) { real_free(p); }
static int libc_munmap(void *a, size_t n) { return real_munmap(a, n); }

void sp_mem_hooks_init(void) { sp_libc_set(libc_free, libc_munmap); }

/* ---- free / realloc -------------------------------------------------------- */

/* Lock held: the block [p, p+n) frees a registration, or a release is
 * pending over it. */
static int block_involved(uintptr_t p, size_t n)
{
    return sp_live_in(p, n, 1) || sp_reaper_pending_overlaps(p, n);
}

/* The filter said "maybe" for the block [p, p+n): look under the lock. */
__attribute__((noinline)) static void free_slow(void *p, size_t n)
{
    uintptr_t a = (uintptr_t)p;
    mem_lock();
    if (!sp_reg_find_overlap(a, n)) {
        mem_unlock();
        real_free(p);
        return;
    }
    sp_claim(a, n, "free", 1, 0);
    int deferred = sp_reaper_defer_free(p, n, may_wait());
    mem_unlock();
    sp_reaper_kick();
    if (!deferred)
        real_free(p);
}

/* With ranges registered, a free of a block that no range can overlap (the
 * filter's answer, inline) costs the block's size and two loads of the
 * filter. Out of line, so that the empty registry's path of sp_free stays a
 * bare tail call. */
__attribute__((noinline)) static void free_filtered(void *p)
{
    size_t n = malloc_usable_size(p);
    if (LIKELY(!sp_reg_maybe((uintptr_t)p, n)) || sp_self()) {
        real_free(p); /* lock held: a free made inside safepin, never ours */
        return;
    }
    free_slow(p, n);
}

SP_EARLY void sp_free(void *p)
{
    if (LIKELY(sp_reg_empty()) || !p) {
        real_free(p);
        return;
    }
    free_filtered(p);
}

SP_EARLY void *sp_realloc(void *p, size_t n)
{
    if (LIKELY(sp_reg_empty()) || !p || sp_self())
        return real_realloc(p, n);
    uintptr_t a = (uintptr_t)p;
    size_t old = malloc_usable_size(p);
    if (!sp_reg_maybe(a, old))
        return real_realloc(p, n);
    mem_lock();
    int involved = block_involved(a, old);
    mem_unlock();
    if (!involved)
        return real_realloc(p, n);
    /* The new block now (realloc(p, 0) frees); the old one stays alive until
     * its release. If the release completed meanwhile, free it now. */
    void *q = n ? malloc(n) : NULL;
    if (n && !q)
        return NULL;
    if (q)
        memcpy(q, p, old < n ? old : n);
    mem_lock();
    sp_claim(a, old, "realloc", 1, 0);
    int deferred = sp_reaper_defer_free(p, old, may_wait());
    mem_unlock();
    sp_reaper_kick();
    if (!deferred)
        real_free(p);
    return q;
}
