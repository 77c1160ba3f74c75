/*
 * mem_mappings.c - munmap, mremap, madvise, fixed mmap, shmdt over
 * registered memory (mem_int.h says what each does), and which of their
 * refusals are the program's arguments' fault (sp_mem_fault).
 */
#include "mem_int.h"

#include <errno.h>

/* n rounded up to pages; 0 if that overflows. */
static size_t page_up(size_t n)
{
    size_t pg = sp_page_size();
    return n > SIZE_MAX - (pg - 1) ? 0 : (n + pg - 1) & ~(pg - 1);
}

static int misaligned(uintptr_t a) { return (a & (sp_page_size() - 1)) != 0; }

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
     * real munmap: see sp_claim_quiet. */
    claim_ctx c;
    holes h;
    sp_fill_holes(a, n, &h); /* removed with the span: by the calls below */
    sp_claim_quiet(&c, a, n, "munmap");
    sp_reaper_defer_unmap(a, n, may_wait());
    sp_claim_say(&c);
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
    if (sp_maps_walk(sp_find_vma, &c) < 0)
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
    int live = sp_live_in(gone, gone_len, 0) + sp_live_in(na, dst_len, 0);
    mem_unlock();
    /* Registrations change only if the kernel will accept the call. */
    if (live && mremap_source_refused(o, os, moves || ns > os))
        return real_mremap(old, old_size, new_size, flags, new_addr);
    mem_lock();
    holes cut, dst;
    sp_fill_holes(moves ? 0 : gone, moves ? 0 : gone_len, &cut);
    sp_fill_holes(na, dst_len, &dst);
    sp_claim(gone, gone_len, "mremap", 0, !moves);
    sp_claim(na, dst_len, "mremap(MREMAP_FIXED)", 0, 0);
    settle(o, src_len);
    if (dst_len)
        settle(na, dst_len);
    mem_unlock();
    sp_reaper_kick();
    void *q = real_mremap(old, old_size, new_size, flags, new_addr);
    if (q == MAP_FAILED) {
        sp_unfill_holes(&cut);
        sp_unfill_holes(&dst);
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
    int live = sp_live_in(a, n, 0);
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
    sp_fill_holes(a, n, &h);
    sp_claim(a, n, "mmap(MAP_FIXED)", 0, 0);
    settle(a, n);
    mem_unlock();
    sp_reaper_kick();
    void *p = real_mmap(addr, len, prot, flags, fd, off);
    if (p == MAP_FAILED)
        sp_unfill_holes(&h);
    return p;
}

int sp_shmdt(const void *addr)
{
    uintptr_t a = (uintptr_t)addr;
    if (LIKELY(sp_reg_empty()) || sp_self() || misaligned(a))
        return real_shmdt(addr);
    shm_ctx c = {a, 0, 0, 0};
    int rc = sp_maps_walk(sp_find_shm, &c);
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
    sp_claim(a, len, "shmdt", 0, 0);
    settle(a, len);
    mem_unlock();
    sp_reaper_kick();
    return real_shmdt(addr);
}
