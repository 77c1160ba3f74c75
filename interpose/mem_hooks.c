/*
 * mem_hooks.c - free, realloc, munmap, mremap, madvise and fixed mmap.
 *
 * With nothing registered each hook is one predictable branch
 * (sp_reg_empty) before the real function. Otherwise a lock-free address
 * filter (sp_reg_maybe), then a lookup under the lock. Memory whose release
 * is pending is kept alive: the call is deferred to the reaper and the
 * caller sees success at once (G2, G7). Memory hooks never initialize the
 * library and work before the real functions are resolved.
 */
#include "internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

extern void *__libc_realloc(void *, size_t);

#define LIKELY(x) __builtin_expect(!!(x), 1)

/* The paths taken before sp_init (and possibly while a sanitizer runtime
 * preloaded after safepin initializes) are not instrumented. */
#define SP_EARLY __attribute__((no_sanitize_address))

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

typedef struct freed_ctx {
    const char *what;
    uintptr_t addr;
    size_t len;
    sp_site *site;
} freed_ctx;

static int report_live(sp_range *r, void *arg)
{
    freed_ctx *c = arg;
    if (r->state != SP_RANGE_LIVE)
        return 0;
    if (!r->unreg_site && c->site) {
        /* The range keeps its own copy of where it was freed. */
        size_t sz = sizeof(sp_site) + (size_t)c->site->n * sizeof(void *);
        sp_site *copy = sp_mem_alloc(sz);
        if (copy) {
            memcpy(copy, c->site, sz);
            r->unreg_site = copy;
        }
    }
    r->t_unregister_ns = sp_now_ns();
    sp_diag(SP_FREED_WHILE_REGISTERED, r,
            "%s(0x%lx, %zu bytes) of memory still registered: the range 0x%lx (%zu bytes) is "
            "released first and the memory kept alive until then",
            c->what, (unsigned long)c->addr, c->len, (unsigned long)r->base, r->size);
    sp_history_add(SP_EV_FREE, r->base, r->size, c->site);
    return 0;
}

void sp_report_freed_live(uintptr_t addr, size_t len, const char *what)
{
    freed_ctx c = {what, addr, len, NULL};
    c.site = sp_site_capture();
    sp_reg_for_overlaps(addr, len, report_live, &c);
    sp_site_free(c.site);
}

/* Defer an action over [a, a+len) if any range overlaps it (reporting the
 * live ones as freed-while-registered), then wake the reaper. 1 if the
 * caller must not run the action itself. */
static int defer(sp_act_kind kind, uintptr_t a, size_t len, const char *what)
{
    int deferred = 0;
    sp_reg_lock();
    if (sp_reg_find_overlap(a, len)) {
        sp_report_freed_live(a, len, what);
        deferred = sp_reaper_defer(kind, (void *)a, len, 0);
    }
    sp_reg_unlock();
    sp_reaper_kick();
    return deferred;
}

/* ---- free / realloc -------------------------------------------------------- */

__attribute__((noinline)) static void free_slow(void *p)
{
    if (!sp_reg_held()) {
        size_t n = malloc_usable_size(p);
        if (sp_reg_maybe((uintptr_t)p, n) && defer(SP_ACT_FREE, (uintptr_t)p, n, "free"))
            return;
    }
    real_free(p);
}

SP_EARLY void sp_free(void *p)
{
    if (LIKELY(sp_reg_empty()) || !p) {
        real_free(p);
        return;
    }
    free_slow(p);
}

SP_EARLY void *sp_realloc(void *p, size_t n)
{
    if (LIKELY(sp_reg_empty()) || !p || sp_reg_held())
        return real_realloc(p, n);
    size_t old = malloc_usable_size(p);
    if (!sp_reg_maybe((uintptr_t)p, old))
        return real_realloc(p, n);
    sp_reg_lock();
    int registered = sp_reg_find_overlap((uintptr_t)p, old) != NULL;
    sp_reg_unlock();
    if (!registered)
        return real_realloc(p, n);
    /* The new block now (realloc(p, 0) frees); the old one stays alive until
     * its release. If the release completed meanwhile, free it now. */
    void *q = n ? malloc(n) : NULL;
    if (n && !q)
        return NULL;
    if (q)
        memcpy(q, p, old < n ? old : n);
    if (!defer(SP_ACT_FREE, (uintptr_t)p, old, "realloc"))
        real_free(p);
    return q;
}

/* ---- mappings ---------------------------------------------------------------- */

SP_EARLY int sp_munmap(void *addr, size_t len)
{
    if (LIKELY(sp_reg_empty()) || sp_reg_held() || !sp_reg_maybe((uintptr_t)addr, len))
        return real_munmap(addr, len);
    return defer(SP_ACT_MUNMAP, (uintptr_t)addr, len, "munmap") ? 0 : real_munmap(addr, len);
}

static size_t page_up(size_t n)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    return (n + pg - 1) & ~(pg - 1);
}

void *sp_mremap(void *old, size_t old_size, size_t new_size, int flags, void *new_addr)
{
    if (LIKELY(sp_reg_empty()) || sp_reg_held())
        return real_mremap(old, old_size, new_size, flags, new_addr);
    uintptr_t o = (uintptr_t)old;
    if (flags & MREMAP_FIXED) {
        /* The destination is replaced: whatever is deferred there goes first. */
        sp_reg_lock();
        sp_report_freed_live((uintptr_t)new_addr, new_size, "mremap(MREMAP_FIXED)");
        sp_reaper_wait_clear((uintptr_t)new_addr, new_size);
        sp_reg_unlock();
    }
    if (!sp_reg_maybe(o, old_size))
        return real_mremap(old, old_size, new_size, flags, new_addr);
    sp_reg_lock();
    int registered = sp_reg_find_overlap(o, old_size) != NULL;
    sp_reg_unlock();
    if (!registered)
        return real_mremap(old, old_size, new_size, flags, new_addr);

    if (flags & (MREMAP_MAYMOVE | MREMAP_FIXED)) {
        /* Move by copy: the old pages stay mapped until their release. */
        int mflags = MAP_PRIVATE | MAP_ANONYMOUS | ((flags & MREMAP_FIXED) ? MAP_FIXED : 0);
        void *q = real_mmap((flags & MREMAP_FIXED) ? new_addr : NULL, new_size,
                            PROT_READ | PROT_WRITE, mflags, -1, 0);
        if (q == MAP_FAILED)
            return MAP_FAILED;
        memcpy(q, old, old_size < new_size ? old_size : new_size);
        if (!defer(SP_ACT_MUNMAP, o, old_size, "mremap"))
            real_munmap(old, old_size);
        return q;
    }
    if (new_size < old_size) {
        size_t keep = page_up(new_size);
        if (keep >= old_size)
            return real_mremap(old, old_size, new_size, flags, new_addr);
        return defer(SP_ACT_MUNMAP, o + keep, old_size - keep, "mremap (shrink)")
                   ? old
                   : real_mremap(old, old_size, new_size, flags, new_addr);
    }
    return real_mremap(old, old_size, new_size, flags, new_addr); /* grows in place */
}

static int count_live(sp_range *r, void *arg)
{
    if (r->state == SP_RANGE_LIVE)
        ++*(int *)arg;
    return 0;
}

SP_EARLY int sp_madvise(void *addr, size_t len, int advice)
{
    if (LIKELY(sp_reg_empty()) ||
        (advice != MADV_DONTNEED && advice != MADV_FREE && advice != MADV_REMOVE) ||
        sp_reg_held() || !sp_reg_maybe((uintptr_t)addr, len))
        return real_madvise(addr, len, advice);
    sp_reg_lock();
    int live = 0, deferred = 0;
    sp_reg_for_overlaps((uintptr_t)addr, len, count_live, &live);
    if (!live && sp_reaper_pending_overlaps((uintptr_t)addr, len))
        deferred = sp_reaper_defer(SP_ACT_MADVISE, addr, len, advice);
    sp_reg_unlock();
    return deferred ? 0 : real_madvise(addr, len, advice);
}

SP_EARLY void *sp_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    if (LIKELY(!(flags & MAP_FIXED)) || sp_reg_empty() || sp_reg_held() ||
        !sp_reg_maybe((uintptr_t)addr, len))
        return real_mmap(addr, len, prot, flags, fd, off);
    sp_reg_lock();
    sp_report_freed_live((uintptr_t)addr, len, "mmap(MAP_FIXED)");
    sp_reaper_wait_clear((uintptr_t)addr, len);
    sp_reg_unlock();
    return real_mmap(addr, len, prot, flags, fd, off);
}
