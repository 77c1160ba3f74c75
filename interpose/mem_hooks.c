/*
 * mem_hooks.c - free, realloc, munmap, mremap, madvise, fixed mmap, shmdt.
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
#include "internal.h"
#include "ownstack.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>

/* safepin's own code calls: under the process lock, or on safepin's stack
 * (util/ownstack.h, where libc's own frees come from the report's stdio).
 * They pass through. */
__attribute__((no_sanitize_address)) static inline int sp_self(void)
{
    return sp_lock_held() || sp_ownstack_held();
}

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

SP_EARLY static inline int real_shmdt(const void *a)
{
    if (sp_real.shmdt)
        return sp_real.shmdt(a);
    return (int)syscall(SYS_shmdt, a);
}

/* libc's own, for the frees and unmaps the reaper carries out later. */
static void libc_free(void *p) { real_free(p); }
static int libc_munmap(void *a, size_t n) { return real_munmap(a, n); }

void sp_mem_hooks_init(void) { sp_libc_set(libc_free, libc_munmap); }

/* ---- common ------------------------------------------------------------------ */

/* n rounded up to pages; 0 if that overflows. */
static size_t page_up(size_t n)
{
    size_t pg = sp_page_size();
    return n > SIZE_MAX - (pg - 1) ? 0 : (n + pg - 1) & ~(pg - 1);
}

static int misaligned(uintptr_t a) { return (a & (sp_page_size() - 1)) != 0; }

/* Lock held. Waiting for a release inside a host function would wait
 * behind that host function itself (G8), and during the thread's own
 * capture it could wait for that capture's end: the memory hooks never
 * wait there. */
static int may_wait(void) { return !sp_tls_in_hostfn && !sp_streams_thread_captures(); }

/* Lock held. Make [a, a+len) ready for a call that acts on it at once: wait
 * until no release or deferred action is pending there; where waiting is
 * impossible, run the deferred unmaps there now (the pages are gone for the
 * program anyway) and go on. */
static void settle(uintptr_t a, size_t len)
{
    if (!sp_reaper_pending_overlaps(a, len))
        return;
    if (may_wait())
        sp_reaper_wait_pending(a, len);
    else
        sp_reaper_unmap_now(a, len);
}

/* The kernel's limit on user addresses (TASK_SIZE): on x86-64 2^47 less a
 * page, or 2^56 less a page with 5-level paging, which the kernel shows by
 * accepting a mapping at 2^47. Elsewhere unknown: only overflow is checked. */
static uintptr_t task_size(void)
{
    static uintptr_t limit;
    uintptr_t v = __atomic_load_n(&limit, __ATOMIC_RELAXED);
    if (v)
        return v;
#if defined(__x86_64__)
    size_t pg = sp_page_size();
    uintptr_t low = ((uintptr_t)1 << 47) - pg, high = ((uintptr_t)1 << 56) - pg;
    int saved = errno;
    void *p = (void *)syscall(SYS_mmap, (void *)(low + pg), pg, PROT_NONE,
                              MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE,
                              -1, 0);
    if (p == MAP_FAILED) {
        v = errno == EEXIST ? high : low;
    } else {
        v = p == (void *)(low + pg) ? high : low;
        syscall(SYS_munmap, p, pg);
    }
    errno = saved;
#else
    v = UINTPTR_MAX;
#endif
    __atomic_store_n(&limit, v, __ATOMIC_RELAXED);
    return v;
}

/* 1 if the kernel refuses munmap(a, len) (EINVAL) without looking at the
 * mappings. */
static int munmap_refused(uintptr_t a, size_t len)
{
    uintptr_t ts = task_size();
    return misaligned(a) || page_up(len) == 0 || a > ts || len > ts - a;
}

/* 1 if the kernel refuses a fixed mmap at [a, a+len) whatever the mappings
 * and the descriptor are (EINVAL, ENOMEM). */
static int fixed_mmap_refused(uintptr_t a, size_t len, off_t off)
{
    size_t n = page_up(len);
    uintptr_t ts = task_size();
    return misaligned(a) || n == 0 || ((uintptr_t)off & (sp_page_size() - 1)) || n > ts || a > ts - n;
}

/* ---- api-error: which refusals are the program's arguments' fault ---------- */

/* The program's own libc call failed with err: 1 if the error lies in its
 * arguments (an api-error line, api_error.h), 0 if it describes the process
 * or the system, which correct programs meet and handle. EINVAL, EBADF and
 * EFAULT name an argument; ENOMEM does only for a range no user address
 * space holds (a kernel address, a size past the top); other errors (ENOMEM
 * of a full address space or of a failed growth, EEXIST of
 * MAP_FIXED_NOREPLACE, EAGAIN, EACCES, ENODEV) do not. Two EINVALs are
 * probes: madvise of a valid range (an advice this kernel or this mapping
 * does not support: allocators try MADV_FREE, programs MADV_HUGEPAGE) and
 * mmap with MAP_HUGETLB (whether huge pages are set up). Never a hook's
 * error safepin caused: those are its own answers, with their own
 * diagnostics. */
int sp_mem_fault(int kind, int err, const void *addr, size_t len, int flags)
{
    uintptr_t a = (uintptr_t)addr, ts = task_size();
    int beyond = a > ts || len > ts - a;
    if (kind == SP_FAULT_ADVICE && err == EINVAL && !misaligned(a) && !beyond)
        return 0;
    if (kind == SP_FAULT_MAP && (flags & MAP_HUGETLB))
        return 0;
    if (err == EINVAL || err == EBADF || err == EFAULT)
        return 1;
    return err == ENOMEM && beyond;
}

/* ---- the process's mappings (/proc/self/maps) --------------------------- */

typedef struct vma {
    uintptr_t start, end;
    uintptr_t offset; /* in the file mapped */
    unsigned long inode;
    int shared;
    int sysv; /* a SysV shared-memory segment */
} vma;

static const char *hex_field(const char *s, const char *e, uintptr_t *v)
{
    uintptr_t x = 0;
    int n = 0;
    for (; s < e; s++, n++) {
        int d = *s >= '0' && *s <= '9' ? *s - '0' : *s >= 'a' && *s <= 'f' ? *s - 'a' + 10 : -1;
        if (d < 0)
            break;
        x = x * 16 + (uintptr_t)d;
    }
    *v = x;
    return n ? s : NULL;
}

static const char *skip_to(const char *s, const char *e, char c)
{
    while (s < e && *s != c)
        s++;
    return s < e ? s + 1 : NULL;
}

/* One line: "start-end perms offset dev inode path". 0 if it parsed. */
static int parse_vma(const char *s, const char *e, vma *v)
{
    memset(v, 0, sizeof(*v));
    if (!(s = hex_field(s, e, &v->start)) || s >= e || *s++ != '-' ||
        !(s = hex_field(s, e, &v->end)) || e - s < 6 || *s++ != ' ')
        return -1;
    v->shared = s[3] == 's';
    if (!(s = skip_to(s, e, ' ')) || !(s = hex_field(s, e, &v->offset)) ||
        !(s = skip_to(s, e, ' ')) || !(s = skip_to(s, e, ' ')))
        return -1; /* perms, offset, dev */
    for (; s < e && *s >= '0' && *s <= '9'; s++)
        v->inode = v->inode * 10 + (unsigned long)(*s - '0');
    while (s < e && *s == ' ')
        s++;
    v->sysv = e - s >= 5 && memcmp(s, "/SYSV", 5) == 0;
    return 0;
}

/* Call fn for each mapping of the process, in address order, until it
 * returns nonzero (returned). -1 if the mappings cannot be read. Allocates
 * nothing; the descriptor is safepin's own for the call. */
static int maps_walk_here(int (*fn)(const vma *v, void *arg), void *arg)
{
    int saved = errno;
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        errno = saved;
        return -1;
    }
    char buf[4096];
    size_t have = 0;
    int rc = 0, eof = 0, skipping = 0;
    while (rc == 0) {
        char *nl = memchr(buf, '\n', have);
        if (!nl && !eof && have < sizeof(buf)) {
            ssize_t n = read(fd, buf + have, sizeof(buf) - have);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                eof = 1;
            else
                have += (size_t)n;
            continue;
        }
        if (!nl && have == 0)
            break;
        /* A line longer than the buffer: its fields lead it; the rest of
         * it is skipped. */
        char *end = nl ? nl : buf + have;
        vma v;
        if (!skipping && parse_vma(buf, end, &v) == 0)
            rc = fn(&v, arg);
        skipping = !nl;
        size_t used = nl ? (size_t)(nl + 1 - buf) : have;
        memmove(buf, buf + used, have - used);
        have -= used;
    }
    close(fd);
    errno = saved;
    return rc;
}

/* maps_walk_here on safepin's stack (util/ownstack.h): its buffer is 4 KiB,
 * and the program's thread may have only PTHREAD_STACK_MIN. */
typedef struct maps_walk_call {
    int (*fn)(const vma *v, void *arg);
    void *arg;
    int rc;
} maps_walk_call;

static void maps_walk_own(void *p)
{
    maps_walk_call *c = p;
    c->rc = maps_walk_here(c->fn, c->arg);
}

static int maps_walk(int (*fn)(const vma *v, void *arg), void *arg)
{
    maps_walk_call c = {fn, arg, -1};
    sp_call_on_own_stack(maps_walk_own, &c);
    return c.rc;
}

typedef struct find_ctx {
    uintptr_t a;
    vma v;
    int found;
} find_ctx;

static int find_vma(const vma *v, void *arg)
{
    find_ctx *c = arg;
    if (v->start <= c->a && c->a < v->end) {
        c->v = *v;
        c->found = 1;
        return 1;
    }
    return v->start > c->a;
}

/* The SysV segment attached at a, as the kernel's shmdt finds it: the
 * first segment mapping at or above a whose offset in the segment is its
 * distance from a, then every mapping of that segment placed the same way. */
typedef struct shm_ctx {
    uintptr_t a, end;
    unsigned long inode;
    int found;
} shm_ctx;

static int find_shm(const vma *v, void *arg)
{
    shm_ctx *c = arg;
    if (v->start < c->a || !v->sysv || v->start - c->a != v->offset)
        return 0;
    if (!c->found) {
        c->found = 1;
        c->inode = v->inode;
    } else if (v->inode != c->inode) {
        return 0;
    }
    c->end = v->end;
    return 0;
}

/* ---- holes in a span ---------------------------------------------------------- */

/* A span that the program's call empties or replaces whole (munmap, a
 * fixed mapping, the tail a shrinking mremap cuts off) may have holes:
 * address space the kernel hands to the next mapping anyone makes. Until
 * the real call, safepin may map memory of its own (the reaper thread's
 * stack and thread-local blocks, when a release or a wait starts it; the
 * runtime's, while a release completes), and registered pages of the span
 * stay until their release (their deferred unmap would take a hole with
 * them, and whatever the program mapped there meanwhile). So each hole is
 * filled first with an inaccessible placeholder of safepin's own, which
 * the real call, or the deferred unmap, removes with the rest of the span.
 * A span mapped throughout costs one msync (MS_ASYNC only checks that);
 * holes past the first SP_HOLES are left as they are. */
#define SP_HOLES 16

typedef struct holes {
    int n;
    uintptr_t at[SP_HOLES];
    size_t len[SP_HOLES];
} holes;

typedef struct hole_ctx {
    uintptr_t pos, end;
    holes *h;
} hole_ctx;

static void add_hole(hole_ctx *c, uintptr_t at, uintptr_t end)
{
    if (end > at && c->h->n < SP_HOLES) {
        c->h->at[c->h->n] = at;
        c->h->len[c->h->n++] = end - at;
    }
}

static int find_holes(const vma *v, void *arg)
{
    hole_ctx *c = arg;
    if (v->end <= c->pos)
        return 0;
    add_hole(c, c->pos, v->start < c->end ? v->start : c->end);
    if (v->end > c->pos)
        c->pos = v->end;
    return c->pos >= c->end || c->h->n == SP_HOLES;
}

static void fill_holes(uintptr_t a, size_t len, holes *h)
{
    h->n = 0;
    int saved = errno;
    if (!len || syscall(SYS_msync, (void *)a, len, MS_ASYNC) == 0) {
        errno = saved;
        return;
    }
    hole_ctx c = {a, a + len, h};
    int rc = maps_walk(find_holes, &c);
    if (rc == 0)
        add_hole(&c, c.pos, c.end); /* past the last mapping */
    else if (rc < 0)
        h->n = 0;
    int kept = 0;
    for (int i = 0; i < h->n; i++) {
        void *p = (void *)syscall(SYS_mmap, (void *)h->at[i], h->len[i], PROT_NONE,
                                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE,
                                  -1, 0);
        if (p == MAP_FAILED)
            continue; /* mapped meanwhile: the program's, its call acts on it */
        if ((uintptr_t)p != h->at[i]) {
            syscall(SYS_munmap, p, h->len[i]); /* a kernel before 4.17: a mere hint */
            continue;
        }
        h->at[kept] = h->at[i];
        h->len[kept++] = h->len[i];
    }
    h->n = kept;
    errno = saved;
}

/* The real call failed: the placeholders go, the holes are as they were. */
static void unfill_holes(const holes *h)
{
    int saved = errno;
    for (int i = 0; i < h->n; i++)
        syscall(SYS_munmap, (void *)h->at[i], h->len[i]);
    errno = saved;
}

/* ---- freed-while-registered ------------------------------------------------- */

/* Lock held. G7: a block [a, a+n) the program frees gives up r when it
 * contains r's base or covers a whole page of r; a neighbour that only
 * shares an edge page of a page-rounded registration does not. */
static int frees_range(uintptr_t a, size_t n, const sp_range *r)
{
    if (r->base >= a && r->base - a < n)
        return 1;
    uintptr_t lo = a > r->base ? a : r->base;
    uintptr_t end = a + n, r_end = r->base + r->size;
    uintptr_t hi = end < r_end ? end : r_end;
    size_t pg = sp_page_size();
    uintptr_t first = (lo + pg - 1) & ~(uintptr_t)(pg - 1);
    return first >= lo && first < hi && hi - first >= pg;
}

typedef struct claim_ctx {
    const char *what;
    uintptr_t addr;
    size_t len;
    int block;      /* a malloc block: G7's rule says which ranges it frees */
    int live_only;  /* count LIVE ranges it would claim (and claim none) */
    int n;
    sp_site *site;
    /* The diagnostics wait until the caller has made the real call
     * (claim_quiet/claim_say): see sp_munmap. */
    int quiet;
    int n_quiet;
    uintptr_t quiet_base[8];
    unsigned char quiet_part[8];
    /* munmap: a LIVE range is given up only with its base (see claim_one) */
    int base_only;
} claim_ctx;

/* munmap of pages of a live range that leaves its base mapped: see
 * claim_one. */
static void say_part_unmapped(sp_range *r, claim_ctx *c)
{
    sp_diag(SP_FREED_WHILE_REGISTERED, r,
            "%s(0x%lx, %zu bytes) of part of the registered range 0x%lx (%zu bytes): its base stays "
            "mapped, so the range stays registered (and usable) until it is unregistered; the "
            "unmapped pages are gone at once, as without safepin",
            c->what, (unsigned long)c->addr, c->len, (unsigned long)r->base, r->size);
}

static void say_freed(sp_range *r, claim_ctx *c)
{
    sp_diag(SP_FREED_WHILE_REGISTERED, r,
            "%s(0x%lx, %zu bytes) of memory still registered: the range 0x%lx (%zu bytes) is "
            "released first and the memory kept alive until then",
            c->what, (unsigned long)c->addr, c->len, (unsigned long)r->base, r->size);
    sp_hazard_prevented(SP_HZ_STALE_REGISTRATION, r, "%s(0x%lx) of registered memory", c->what,
                        (unsigned long)c->addr);
    sp_history_add(SP_EV_FREE, r->base, r->size, c->site);
}

static void report_live(sp_range *r, claim_ctx *c)
{
    if (!c->site)
        c->site = sp_site_capture();
    if (!sp_sites(r)->unreg && c->site) {
        /* The range keeps its own copy of where it was freed. */
        size_t sz = sizeof(sp_site) + (size_t)c->site->n * sizeof(void *);
        sp_site *copy = sp_mem_alloc(sz);
        if (copy) {
            memcpy(copy, c->site, sz);
            sp_sites(r)->unreg = copy;
        }
    }
    r->t_unregister_ns = sp_now_ns();
    sp_reaper_owe(r->base);
    if (c->quiet && c->n_quiet < (int)sizeof(c->quiet_part)) {
        c->quiet_part[c->n_quiet] = 0;
        c->quiet_base[c->n_quiet++] = r->base;
    } else {
        say_freed(r, c);
    }
}

/* Lock held. G7 for munmap: unmapping pages of a live range that leave its
 * base mapped (a program shrinking a buffer it still uses) does not release
 * it: without safepin the registration is whole until the program
 * unregisters it by its base, and the head keeps working. The pages go at
 * once, as they do without safepin. */
static int keeps_live_range(const sp_range *r, const claim_ctx *c)
{
    return c->base_only && r->state == SP_RANGE_LIVE &&
           !(r->base >= c->addr && r->base - c->addr < c->len);
}

static int claim_one(sp_range *r, void *arg)
{
    claim_ctx *c = arg;
    if (c->block && !frees_range(c->addr, c->len, r))
        return 0;
    if (keeps_live_range(r, c)) {
        if (c->quiet && c->n_quiet < (int)sizeof(c->quiet_part)) {
            c->quiet_part[c->n_quiet] = 1;
            c->quiet_base[c->n_quiet++] = r->base;
        } else {
            say_part_unmapped(r, c);
        }
        return 0;
    }
    if (c->live_only) {
        c->n += r->state == SP_RANGE_LIVE;
        return 0;
    }
    if (r->state == SP_RANGE_LIVE)
        report_live(r, c);
    sp_reaper_claim(r);
    c->n++;
    return 0;
}

/* Lock held. The program gives up [addr, addr+len) (what: the call):
 * release the LIVE registrations there (freed-while-registered) and mark
 * every one there freed. block: a malloc block (G7's rule). base_only: the
 * span is cut off a mapping whose head stays (a shrinking mremap): a LIVE
 * range whose base stays mapped is kept, as munmap keeps it. Returns how
 * many ranges it claimed. */
static int claim(uintptr_t addr, size_t len, const char *what, int block, int base_only)
{
    claim_ctx c = {what, addr, len, block, 0, 0, NULL, 0, 0, {0}, {0}, base_only};
    if (!len)
        return 0;
    sp_reaper_wait_registering(addr, len);
    sp_reg_for_overlaps(addr, len, claim_one, &c);
    sp_site_free(c.site);
    return c.n;
}

/* Lock held. claim(), but the freed-while-registered diagnostics wait for
 * claim_say(): a diagnostic maps memory of its own (the symbolizer, the
 * allocator, a sanitizer runtime's bookkeeping), which the kernel may place
 * in a hole of the very span the program is unmapping; unmapping first
 * keeps safepin from unmapping its own new memory. */
static void claim_quiet(claim_ctx *c, uintptr_t addr, size_t len, const char *what)
{
    *c = (claim_ctx){what, addr, len, 0, 0, 0, NULL, 1, 0, {0}, {0}, 1};
    if (!len)
        return;
    sp_reaper_wait_registering(addr, len);
    sp_reg_for_overlaps(addr, len, claim_one, c);
}

/* Lock held. The diagnostics claim_quiet() kept back, for the ranges still
 * there (a range released meanwhile is said without its details). */
static void claim_say(claim_ctx *c)
{
    for (int i = 0; i < c->n_quiet; i++) {
        sp_range *r = sp_reg_find_containing(c->quiet_base[i]);
        if (r && r->base == c->quiet_base[i] && c->quiet_part[i])
            say_part_unmapped(r, c);
        else if (r && r->base == c->quiet_base[i])
            say_freed(r, c);
        else
            sp_diag(SP_FREED_WHILE_REGISTERED, NULL,
                    "%s(0x%lx, %zu bytes) of memory still registered at 0x%lx: released first",
                    c->what, (unsigned long)c->addr, c->len, (unsigned long)c->quiet_base[i]);
    }
    sp_site_free(c->site);
    c->site = NULL;
}

/* Lock held. How many LIVE registrations claim() would release. */
static int live_in(uintptr_t addr, size_t len, int block)
{
    claim_ctx c = {NULL, addr, len, block, 1, 0, NULL, 0, 0, {0}, {0}, 0};
    if (len)
        sp_reg_for_overlaps(addr, len, claim_one, &c);
    return c.n;
}

/* ---- free / realloc -------------------------------------------------------- */

/* The lock, for a hook of the program's memory calls: no thread of
 * safepin's starts while it is held here (sp_reaper_mem_hook). */
static void mem_lock(void)
{
    sp_lock();
    sp_reaper_mem_hook(1);
}

static void mem_unlock(void)
{
    sp_reaper_mem_hook(0);
    sp_unlock();
}

/* Lock held: the block [p, p+n) frees a registration, or a release is
 * pending over it. */
static int block_involved(uintptr_t p, size_t n)
{
    return live_in(p, n, 1) || sp_reaper_pending_overlaps(p, n);
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
    claim(a, n, "free", 1, 0);
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
    claim(a, old, "realloc", 1, 0);
    int deferred = sp_reaper_defer_free(p, old, may_wait());
    mem_unlock();
    sp_reaper_kick();
    if (!deferred)
        real_free(p);
    return q;
}

/* ---- mappings ---------------------------------------------------------------- */

SP_EARLY int sp_munmap(void *addr, size_t len)
{
    uintptr_t a = (uintptr_t)addr;
    if (LIKELY(sp_reg_empty()) || sp_self() || !sp_reg_maybe(a, len) ||
        munmap_refused(a, len))
        return real_munmap(addr, len);
    size_t n = page_up(len);
    mem_lock();
    if (!sp_reg_find_overlap(a, n)) {
        /* A deferred unmap still to run there would take what the kernel
         * maps there next: it runs first. */
        settle(a, n);
        mem_unlock();
        return real_munmap(addr, len);
    }
    /* Nothing safepin maps on its own (a diagnostic's memory) before the
     * real munmap: see claim_quiet. */
    claim_ctx c;
    holes h;
    fill_holes(a, n, &h); /* removed with the span: by the calls below */
    claim_quiet(&c, a, n, "munmap");
    sp_reaper_defer_unmap(a, n, may_wait());
    claim_say(&c);
    mem_unlock();
    sp_reaper_kick();
    return 0;
}

/* 1 if the kernel refuses this mremap without looking at the mappings. */
static int mremap_args_refused(uintptr_t old, size_t old_size, size_t new_size, int flags,
                               uintptr_t new_addr)
{
    size_t os = page_up(old_size), ns = page_up(new_size);
    if (flags & ~(MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP))
        return 1;
    if ((flags & (MREMAP_FIXED | MREMAP_DONTUNMAP)) && !(flags & MREMAP_MAYMOVE))
        return 1;
    if ((flags & MREMAP_DONTUNMAP) && os != ns)
        return 1;
    if (misaligned(old) || ns == 0 || (old_size && os == 0))
        return 1;
    if (flags & MREMAP_FIXED)
        return misaligned(new_addr) || (new_addr < old + os && old < new_addr + ns);
    return 0;
}

/* 1 if the kernel would refuse this mremap because of the source mapping:
 * no mapping at old (EFAULT), or, for a move or a growth, a source that is
 * not one mapping (EFAULT). 0 if it would not, or if the mappings cannot be
 * read. */
static int mremap_source_refused(uintptr_t old, size_t os, int moves_or_grows)
{
    find_ctx c = {old, {0, 0, 0, 0, 0, 0}, 0};
    if (maps_walk(find_vma, &c) < 0)
        return 0;
    if (!c.found)
        return 1;
    return moves_or_grows && old + os > c.v.end;
}

void *sp_mremap(void *old, size_t old_size, size_t new_size, int flags, void *new_addr)
{
    uintptr_t o = (uintptr_t)old, na = (uintptr_t)new_addr;
    if (LIKELY(sp_reg_empty()) || sp_self() ||
        mremap_args_refused(o, old_size, new_size, flags, na))
        return real_mremap(old, old_size, new_size, flags, new_addr);
    size_t os = page_up(old_size), ns = page_up(new_size);
    int moves = (flags & (MREMAP_FIXED | MREMAP_DONTUNMAP)) || ((flags & MREMAP_MAYMOVE) && ns > os);
    /* What the program gives up: the pages that move away or are cut off
     * (none for an alias, old_size 0), and, for MREMAP_FIXED, the pages the
     * move replaces. The source is looked at (and waited for) in any case. */
    uintptr_t gone = o;
    size_t gone_len = 0;
    if (old_size && moves) {
        gone_len = os;
    } else if (old_size && ns < os) {
        gone = o + ns;
        gone_len = os - ns;
    }
    size_t src_len = os ? os : sp_page_size();
    size_t dst_len = (flags & MREMAP_FIXED) ? ns : 0;
    if (!sp_reg_maybe(o, src_len) && !(dst_len && sp_reg_maybe(na, dst_len)))
        return real_mremap(old, old_size, new_size, flags, new_addr);

    mem_lock();
    int live = live_in(gone, gone_len, 0) + live_in(na, dst_len, 0);
    mem_unlock();
    /* Registrations change only if the kernel will accept the call. */
    if (live && mremap_source_refused(o, os, moves || ns > os))
        return real_mremap(old, old_size, new_size, flags, new_addr);
    mem_lock();
    holes cut, dst;
    fill_holes(moves ? 0 : gone, moves ? 0 : gone_len, &cut);
    fill_holes(na, dst_len, &dst);
    claim(gone, gone_len, "mremap", 0, !moves);
    claim(na, dst_len, "mremap(MREMAP_FIXED)", 0, 0);
    settle(o, src_len);
    if (dst_len)
        settle(na, dst_len);
    mem_unlock();
    sp_reaper_kick();
    void *q = real_mremap(old, old_size, new_size, flags, new_addr);
    if (q == MAP_FAILED) {
        unfill_holes(&cut);
        unfill_holes(&dst);
    }
    return q;
}

SP_EARLY int sp_madvise(void *addr, size_t len, int advice)
{
    uintptr_t a = (uintptr_t)addr;
    if (LIKELY(sp_reg_empty()) ||
        (advice != MADV_DONTNEED && advice != MADV_FREE && advice != MADV_REMOVE) ||
        sp_self() || !sp_reg_maybe(a, len) || misaligned(a) || page_up(len) == 0)
        return real_madvise(addr, len, advice);
    mem_lock();
    settle(a, page_up(len));
    mem_unlock();
    return real_madvise(addr, len, advice);
}

SP_EARLY void *sp_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    uintptr_t a = (uintptr_t)addr;
    if (LIKELY(!(flags & (MAP_FIXED | MAP_FIXED_NOREPLACE))) || sp_reg_empty() ||
        sp_self() || !sp_reg_maybe(a, len) || fixed_mmap_refused(a, len, off))
        return real_mmap(addr, len, prot, flags, fd, off);
    size_t n = page_up(len);
    if (flags & MAP_FIXED_NOREPLACE) {
        /* The kernel says whether the place is free: memory whose unmap is
         * deferred is free for the program. */
        mem_lock();
        settle(a, n);
        mem_unlock();
        return real_mmap(addr, len, prot, flags, fd, off);
    }
    mem_lock();
    int live = live_in(a, n, 0);
    mem_unlock();
    if (live && (flags & MAP_HUGETLB)) {
        /* A fixed huge-page mapping needs a huge-page aligned address (the
         * probe below, placed by the kernel, cannot judge that). */
        unsigned shift = (unsigned)(flags >> MAP_HUGE_SHIFT) & MAP_HUGE_MASK;
        uintptr_t hsz = shift ? (uintptr_t)1 << shift : (uintptr_t)2 << 20;
        if (a & (hsz - 1)) {
            errno = EINVAL;
            return MAP_FAILED;
        }
    }
    if (live) {
        /* Registrations change only if the kernel accepts the mapping: let
         * it judge the flags, descriptor, offset and protection first,
         * elsewhere. */
        void *probe = real_mmap(NULL, len, prot, flags & ~(MAP_FIXED | MAP_POPULATE | MAP_LOCKED),
                                fd, off);
        if (probe == MAP_FAILED)
            return MAP_FAILED;
        syscall(SYS_munmap, probe, len); /* safepin's own probe, not the program's memory */
    }
    mem_lock();
    holes h;
    fill_holes(a, n, &h);
    claim(a, n, "mmap(MAP_FIXED)", 0, 0);
    settle(a, n);
    mem_unlock();
    sp_reaper_kick();
    void *p = real_mmap(addr, len, prot, flags, fd, off);
    if (p == MAP_FAILED)
        unfill_holes(&h);
    return p;
}

int sp_shmdt(const void *addr)
{
    uintptr_t a = (uintptr_t)addr;
    if (LIKELY(sp_reg_empty()) || sp_self() || misaligned(a))
        return real_shmdt(addr);
    shm_ctx c = {a, 0, 0, 0};
    int rc = maps_walk(find_shm, &c);
    if (rc >= 0 && !c.found)
        return real_shmdt(addr); /* no segment there: the kernel answers */
    size_t len = c.found ? c.end - a : sp_page_size();
    if (!sp_reg_maybe(a, len))
        return real_shmdt(addr);
    mem_lock();
    if (!c.found) {
        /* The mappings could not be read: the registration at a, if any,
         * stands for the segment. */
        sp_range *r = sp_reg_find_containing(a);
        if (r)
            len = page_up(r->base + r->size - a);
    }
    claim(a, len, "shmdt", 0, 0);
    settle(a, len);
    mem_unlock();
    sp_reaper_kick();
    return real_shmdt(addr);
}
