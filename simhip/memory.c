/*
 * memory.c - the range table (hipMalloc, hipHostMalloc and registered host
 * ranges), the device's access checks, and the allocation / registration
 * API with the runtime behaviours of DESIGN section 3.
 *
 * The table is a sorted array of non-overlapping ranges under sh_mem_lock.
 * A device address of registered or hipHostMalloc memory is the host
 * address itself (identity mapping); hipMalloc memory is simhip's own mmap.
 *
 * Race detection (hipPointerGetAttributes vs hipHostUnregister on one
 * range): each range carries an "unregistering" marker, held for the whole
 * unregister (synchronize, munlock, and a fixed UNREG_WINDOW_US), and an
 * "attr_busy" count, held for ATTR_WINDOW_US by each attribute query (which
 * takes that long for unknown memory too). Either side finding the other's
 * marker aborts, as the real runtime crashes.
 *
 * The CUDA face (sh_cfg.cuda, set by simcuda) keeps the pinned pages of a
 * registration as CUDA does: after free/munmap of a still-registered range
 * the device keeps using the pages it pinned, which the process no longer
 * maps. A page is still the pinned one while it is mapped and mlocked (a
 * locked page answers EINVAL to MADV_COLD; a new mapping at that address is
 * not locked); otherwise device accesses land in the range's "ghost" (zeros
 * until the device writes), silently. Re-registering that address is 712
 * until the old range is unregistered; runtime aborts become error codes.
 *
 * Both faces keep a page locked while any registration covers it (ranges
 * may share a page at their ends): a register locks its pages and an
 * unregister unlocks those no other registration covers, each in one step
 * with its table change under sh_mem_lock (written), so that no neighbour's
 * unregister can unlock a page under a registration it did not see.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

#define UNREG_WINDOW_US 50
#define ATTR_WINDOW_US 20

/* Linux 5.14's prefault advice (older C libraries lack the names). */
#define SH_MADV_POPULATE_READ 22
#define SH_MADV_POPULATE_WRITE 23

pthread_rwlock_t sh_mem_lock = PTHREAD_RWLOCK_INITIALIZER;
_Thread_local void *sh_tl_owner;

static struct sh_range **ranges;
static size_t nranges, cranges;

static uintptr_t page_size(void)
{
    static uintptr_t pg;
    if (!pg)
        pg = (uintptr_t)sysconf(_SC_PAGESIZE);
    return pg;
}

/* ---- the table (sh_mem_lock held) ------------------------------------ */

/* Index of the first range whose base is > a. */
static size_t upper_bound(uintptr_t a)
{
    size_t lo = 0, hi = nranges;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ranges[mid]->base <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static struct sh_range *find_containing(uintptr_t a)
{
    size_t i = upper_bound(a);
    if (i == 0)
        return NULL;
    struct sh_range *r = ranges[i - 1];
    return a - r->base < r->size ? r : NULL;
}

static struct sh_range *find_overlap(uintptr_t b, size_t n)
{
    struct sh_range *r = find_containing(b);
    if (r)
        return r;
    size_t i = upper_bound(b);
    if (i < nranges && ranges[i]->base - b < n)
        return ranges[i];
    return NULL;
}

static int table_insert(struct sh_range *r)
{
    if (nranges == cranges) {
        size_t nc = cranges ? cranges * 2 : 64;
        struct sh_range **nr = realloc(ranges, nc * sizeof *nr);
        if (!nr)
            return -1;
        ranges = nr;
        cranges = nc;
    }
    size_t i = upper_bound(r->base);
    memmove(&ranges[i + 1], &ranges[i], (nranges - i) * sizeof *ranges);
    ranges[i] = r;
    nranges++;
    return 0;
}

static void table_remove(struct sh_range *r)
{
    for (size_t i = 0; i < nranges; i++) {
        if (ranges[i] == r) {
            memmove(&ranges[i], &ranges[i + 1], (nranges - i - 1) * sizeof *ranges);
            nranges--;
            return;
        }
    }
}

/* ---- device access ------------------------------------------------------ */

/* First page of [a, a+n) that is not mapped (mincore fails), or 0. */
static uintptr_t first_unmapped(uintptr_t a, size_t n)
{
    uintptr_t pg = page_size();
    uintptr_t start = a & ~(pg - 1), end = a + n;
    unsigned char vec[256];
    for (uintptr_t x = start; x < end; x += 256 * pg) {
        size_t len = end - x < 256 * pg ? end - x : 256 * pg;
        if (mincore((void *)x, len, vec) == 0)
            continue;
        for (uintptr_t y = x; y < x + len; y += pg)
            if (mincore((void *)y, pg, vec) != 0)
                return y;
    }
    return 0;
}

/* true: every byte of [a, a+n) is in a live range and mapped. *bad: the
 * first faulting page otherwise. */
static bool accessible(uintptr_t a, size_t n, uintptr_t *bad)
{
    uintptr_t end = a + n, p = a;
    if (end < a) {
        *bad = a;
        return false;
    }
    while (p < end) {
        struct sh_range *r = find_containing(p);
        if (!r) {
            *bad = p;
            return false;
        }
        p = r->base + r->size;
    }
    uintptr_t u = first_unmapped(a, n);
    if (u) {
        *bad = u;
        return false;
    }
    return true;
}

/* The address of the last device fault, for post-mortem tools
 * (simhip_last_fault_address, simhip_ext). */
static uintptr_t last_fault_addr;

uintptr_t simhip_last_fault_address(void);
uintptr_t simhip_last_fault_address(void)
{
    return __atomic_load_n(&last_fault_addr, __ATOMIC_RELAXED);
}

static _Noreturn void gpu_fault(uintptr_t addr)
{
    __atomic_store_n(&last_fault_addr, addr, __ATOMIC_RELAXED);
    char buf[256];
    int n = snprintf(buf, sizeof buf,
                     "Memory access fault by GPU node-1 (Agent handle: 0x%lx) on address 0x%lx. "
                     "Reason: Page not present or supervisor privilege.\n",
                     (unsigned long)(uintptr_t)&sh_cfg, (unsigned long)(addr & ~(page_size() - 1)));
    ssize_t w = write(2, buf, (size_t)n);
    (void)w;
    abort();
}

/* ---- the CUDA face's device view (sh_mem_lock held, read) -------------- */

/* Is the page at pg still the one the registration pinned? */
static bool pinned_page_present(const struct sh_range *r, uintptr_t pg)
{
    unsigned char v;
    if (mincore((void *)pg, page_size(), &v) != 0)
        return false;
    if (!r->locked)
        return true;
    return madvise((void *)pg, page_size(), MADV_COLD) != 0 && errno == EINVAL;
}

static unsigned char *ghost_of(struct sh_range *r)
{
    unsigned char *g = __atomic_load_n(&r->ghost, __ATOMIC_ACQUIRE);
    if (g)
        return g;
    unsigned char *n = calloc(1, r->size);
    if (!n)
        sh_die("out of memory");
    if (!__atomic_compare_exchange_n(&r->ghost, &g, n, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        free(n);
        return g;
    }
    return n;
}

/* Where the device's access at a lands; *chunk is cut to the page and the
 * range. Faults when no range covers a. */
static unsigned char *cuda_view(uintptr_t a, size_t *chunk)
{
    struct sh_range *r = find_containing(a);
    if (!r)
        gpu_fault(a);
    uintptr_t pg = page_size();
    size_t left = r->base + r->size - a, in_page = ((a | (pg - 1)) + 1) - a;
    if (*chunk > left)
        *chunk = left;
    if (*chunk > in_page)
        *chunk = in_page;
    if (r->kind != R_REGISTERED || pinned_page_present(r, a & ~(pg - 1)))
        return (unsigned char *)a;
    return ghost_of(r) + (a - r->base);
}

static void cuda_copy(unsigned char *dst, const unsigned char *src, size_t n, bool check_dst,
                      bool check_src)
{
    size_t off = 0;
    while (off < n) {
        size_t chunk = n - off;
        const unsigned char *s = src + off;
        unsigned char *d = dst + off;
        if (check_src)
            s = cuda_view((uintptr_t)s, &chunk);
        if (check_dst)
            d = cuda_view((uintptr_t)d, &chunk);
        memmove(d, s, chunk);
        off += chunk;
    }
}

static void cuda_fill(unsigned char *dst, int value, unsigned elem, size_t count)
{
    uint32_t v = (uint32_t)value;
    const unsigned char *pat = (const unsigned char *)&v;
    size_t n = count * elem, off = 0;
    while (off < n) {
        size_t chunk = n - off;
        unsigned char *d = cuda_view((uintptr_t)(dst + off), &chunk);
        for (size_t i = 0; i < chunk; i++)
            d[i] = elem == 1 ? (unsigned char)value : pat[(off + i) % elem];
        off += chunk;
    }
}

void sh_device_copy(void *dst, const void *src, size_t n, bool check_dst, bool check_src)
{
    uintptr_t bad;
    if (!n)
        return;
    pthread_rwlock_rdlock(&sh_mem_lock);
    if (sh_cfg.cuda) {
        cuda_copy(dst, src, n, check_dst, check_src);
        pthread_rwlock_unlock(&sh_mem_lock);
        return;
    }
    if (check_src && !accessible((uintptr_t)src, n, &bad))
        gpu_fault(bad);
    if (check_dst && !accessible((uintptr_t)dst, n, &bad))
        gpu_fault(bad);
    memmove(dst, src, n);
    pthread_rwlock_unlock(&sh_mem_lock);
}

void sh_device_fill(void *dst, int value, unsigned elem, size_t count)
{
    uintptr_t bad;
    if (!count)
        return;
    pthread_rwlock_rdlock(&sh_mem_lock);
    if (sh_cfg.cuda) {
        cuda_fill(dst, value, elem, count);
        pthread_rwlock_unlock(&sh_mem_lock);
        return;
    }
    if (!accessible((uintptr_t)dst, count * elem, &bad))
        gpu_fault(bad);
    if (elem == 1) {
        memset(dst, value, count);
    } else {
        uint32_t v = (uint32_t)value; /* little-endian: the low elem bytes */
        for (size_t i = 0; i < count; i++)
            memcpy((char *)dst + i * elem, &v, elem);
    }
    pthread_rwlock_unlock(&sh_mem_lock);
}

bool sh_mem_covered(const void *ptr, size_t n)
{
    uintptr_t p = (uintptr_t)ptr, end = p + n;
    bool ok = true;
    pthread_rwlock_rdlock(&sh_mem_lock);
    while (p < end) {
        struct sh_range *r = find_containing(p);
        if (!r) {
            ok = false;
            break;
        }
        p = r->base + r->size;
    }
    pthread_rwlock_unlock(&sh_mem_lock);
    return ok;
}

bool sh_mem_lookup(const void *p, struct sh_range *out)
{
    pthread_rwlock_rdlock(&sh_mem_lock);
    struct sh_range *r = find_containing((uintptr_t)p);
    if (r)
        *out = *r;
    pthread_rwlock_unlock(&sh_mem_lock);
    return r != NULL;
}

size_t sh_mem_device_bytes(int device)
{
    size_t sum = 0;
    pthread_rwlock_rdlock(&sh_mem_lock);
    for (size_t i = 0; i < nranges; i++)
        if (ranges[i]->kind == R_DEVICE && ranges[i]->device == device)
            sum += ranges[i]->size;
    pthread_rwlock_unlock(&sh_mem_lock);
    return sum;
}

bool sh_mem_is_device(const void *ptr)
{
    pthread_rwlock_rdlock(&sh_mem_lock);
    struct sh_range *r = find_containing((uintptr_t)ptr);
    bool dev = r && r->kind == R_DEVICE;
    pthread_rwlock_unlock(&sh_mem_lock);
    return dev;
}

/* ---- allocations -------------------------------------------------------- */

static hipError_t alloc_range(void **ptr, size_t size, unsigned flags, enum sh_range_kind kind)
{
    if (!ptr)
        return hipErrorInvalidValue;
    if (size == 0) {
        *ptr = NULL;
        return hipSuccess;
    }
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return hipErrorOutOfMemory;
    struct sh_range *r = calloc(1, sizeof *r);
    if (!r)
        goto unmap;
    r->base = (uintptr_t)p;
    r->size = size;
    r->flags = flags;
    r->kind = kind;
    r->device = sh_current_device();
    r->owner = sh_tl_owner;
    pthread_rwlock_wrlock(&sh_mem_lock);
    int rc = table_insert(r);
    pthread_rwlock_unlock(&sh_mem_lock);
    if (rc != 0)
        goto free_range;
    *ptr = p;
    return hipSuccess;
free_range:
    free(r);
unmap:
    munmap(p, size);
    return hipErrorOutOfMemory;
}

/* Free an allocation of the given kind: synchronizes the device first. */
static hipError_t free_range(void *p, enum sh_range_kind kind, const char *api)
{
    pthread_rwlock_rdlock(&sh_mem_lock);
    struct sh_range *r = find_containing((uintptr_t)p);
    bool registered = r && r->kind == R_REGISTERED;
    bool ok = r && r->base == (uintptr_t)p && (r->kind == kind || kind == R_DEVICE);
    pthread_rwlock_unlock(&sh_mem_lock);
    if (registered && kind == R_DEVICE && sh_cfg.cuda)
        return hipErrorInvalidValue;
    if (registered && kind == R_DEVICE)
        sh_die("runtime abort: Memobj map does not have ptr: 0x%lx", (unsigned long)(uintptr_t)p);
    if (!ok)
        return hipErrorInvalidValue;
    sh_sync(SYNC_DEVICE, NULL, sh_current_device(), api);
    pthread_rwlock_wrlock(&sh_mem_lock);
    r = find_containing((uintptr_t)p);
    ok = r && r->base == (uintptr_t)p && r->kind != R_REGISTERED;
    if (ok)
        table_remove(r);
    pthread_rwlock_unlock(&sh_mem_lock);
    if (!ok)
        return hipErrorInvalidValue;
    munmap((void *)r->base, r->size);
    free(r);
    return hipSuccess;
}

hipError_t hipMalloc(void **ptr, size_t size)
{
    sh_init();
    return sh_ret(alloc_range(ptr, size, 0, R_DEVICE));
}

hipError_t hipFree(void *ptr)
{
    sh_init();
    if (!ptr)
        return hipSuccess;
    hipError_t e = sh_capture_check(NULL);
    if (e != hipSuccess)
        return sh_ret(e);
    return sh_ret(free_range(ptr, R_DEVICE, "hipFree"));
}

hipError_t hipHostMalloc(void **ptr, size_t size, unsigned int flags)
{
    sh_init();
    return sh_ret(alloc_range(ptr, size, flags, R_HOSTMALLOC));
}

hipError_t hipHostFree(void *ptr)
{
    sh_init();
    if (!ptr)
        return hipSuccess;
    return sh_ret(free_range(ptr, R_HOSTMALLOC, "hipHostFree"));
}

/* ---- registration -------------------------------------------------------- */

/* ---- what a pinning runtime can lock ------------------------------------ */

/* What the process maps over [p, p+n), read from /proc/thread-self/maps
 * (/proc/self/maps is empty once the main thread has exited with
 * pthread_exit), streamed into a stack buffer and stopping past the range:
 * no allocation, O(mappings below the end). Never touches the range itself.
 * No readable map: SPAN_OK (the lock below decides). */
static enum sh_span span_of(uintptr_t p, size_t n)
{
    uintptr_t end = p + n, at = p; /* at: the first byte not yet seen mapped */
    enum sh_span worst = SPAN_OK;
    int fd = open("/proc/thread-self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return SPAN_OK;
    int lines = 0;
    char buf[4096];
    size_t have = 0;
    bool done = false;
    while (!done) {
        ssize_t r = read(fd, buf + have, sizeof buf - 1 - have);
        if (r <= 0)
            break;
        have += (size_t)r;
        buf[have] = 0;
        char *line = buf, *nl;
        while (!done && (nl = memchr(line, '\n', have - (size_t)(line - buf)))) {
            *nl = 0;
            unsigned long lo, hi;
            char perms[5] = "";
            lines++;
            if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) == 3 && hi > at) {
                if (lo >= end || lo > at) {
                    done = true; /* a hole at 'at' (or the range ended) */
                } else {
                    if (perms[0] != 'r')
                        worst = SPAN_NONE;
                    else if (perms[1] != 'w' && worst == SPAN_OK)
                        worst = SPAN_READ_ONLY;
                    at = hi;
                    done = at >= end;
                }
            }
            line = nl + 1;
        }
        have -= (size_t)(line - buf);
        memmove(buf, line, have);
    }
    close(fd);
    if (lines == 0)
        return SPAN_OK;
    if (at < end)
        return SPAN_HOLE;
    return worst;
}

enum sh_span sh_span_check(const void *p, size_t n, bool read_only_ok)
{
    enum sh_span s = span_of((uintptr_t)p, n);
    return s == SPAN_READ_ONLY && read_only_ok ? SPAN_OK : s;
}

/* Fault in every page of [p, p+size) without writing a byte (the kernel
 * prefaults: MADV_POPULATE_WRITE breaks copy-on-write as a pinning driver
 * does; read-only registrations populate for reading). Kernels before 5.14
 * lack the advice: each page is read instead. No lock held: this is the
 * long part of a pin, and it changes no page's lock. */
static void populate_pages(uintptr_t p, size_t size, bool read_only)
{
    uintptr_t pg = page_size();
    uintptr_t start = p & ~(pg - 1), end = p + size;
    if (madvise((void *)start, end - start,
                read_only ? SH_MADV_POPULATE_READ : SH_MADV_POPULATE_WRITE) != 0) {
        for (uintptr_t x = start; x < end; x += pg) {
            uintptr_t a = x < p ? p : x;
            (void)*(volatile const unsigned char *)a;
        }
    }
}

/* Lock the pages of [p, p+size) (sh_mem_lock held for writing, with the
 * range's insert: no unregister of a neighbour sharing a page can decide
 * between the two that the page is free to unlock). Returns mlock's answer
 * (0: locked). EPERM / ENOMEM (RLIMIT_MEMLOCK) are ignored: the pages stay
 * faulted in. The CUDA face locks with the system call itself (sanitizer
 * runtimes turn mlock() into a no-op) and checks that the first page is
 * locked. */
static int lock_pages(uintptr_t p, size_t size)
{
    uintptr_t pg = page_size();
    uintptr_t start = p & ~(pg - 1), end = p + size;
    if (!sh_cfg.cuda)
        return mlock((void *)start, end - start);
    if (syscall(SYS_mlock, (void *)start, end - start) != 0)
        return -1;
    return madvise((void *)start, pg, MADV_COLD) != 0 && errno == EINVAL ? 0 : -1;
}

/* Does a registration other than r cover a byte of the page at pg? Scans
 * the table (sh_mem_lock held): ranges do not overlap, so their ends are
 * sorted as their bases are, and the walk down from the last range
 * starting in the page stops at the first one ending below it. */
static bool page_shared(uintptr_t pg, const struct sh_range *r)
{
    size_t i = upper_bound(pg + page_size() - 1);
    while (i > 0) {
        const struct sh_range *q = ranges[--i];
        if (q->base + q->size <= pg)
            return false;
        if (q != r && q->kind == R_REGISTERED)
            return true;
    }
    return false;
}

/* Unlock the pages of r that no other live registration covers (sh_mem_lock
 * held for writing, with r's removal from the table). mlock does not count:
 * unlocking a page a neighbour shares would unpin it under the neighbour,
 * whose device accesses would then miss the process's page (the CUDA
 * face's ghost). A driver keeps a page pinned while any registration
 * covers it. Only the first and the last page can be shared. */
static void unpin_unshared(const struct sh_range *r)
{
    uintptr_t pg = page_size();
    uintptr_t s = r->base & ~(pg - 1);
    uintptr_t e = ((r->base + r->size - 1) | (pg - 1)) + 1;
    if (page_shared(s, r))
        s += pg;
    if (e > s && page_shared(e - pg, r))
        e -= pg;
    if (e <= s)
        return;
    if (sh_cfg.cuda)
        syscall(SYS_munlock, (void *)s, e - s);
    else
        munlock((void *)s, e - s);
}

/* The answer to a register of [p, p+n) overlapping a live range (table
 * lock held): CUDA refuses any overlap with 712; newer clr (rocm7) refuses
 * when p lies inside an existing object (rocm-systems PR 7498 looks up p
 * alone); otherwise hipSuccess, and the old object and its size stay. */
static hipError_t overlap_answer(uintptr_t p, size_t n)
{
    if (sh_cfg.cuda && find_overlap(p, n))
        return hipErrorHostMemoryAlreadyRegistered;
    if (sh_cfg.personality == SH_ROCM7 && find_containing(p))
        return hipErrorHostMemoryAlreadyRegistered;
    return hipSuccess;
}

/* The answer to a range the process does not map whole, or maps without
 * the access a pin needs (span != SPAN_OK). clr locks the pages before it
 * records anything: amd::Memory::create fails, and ihipHostRegister returns
 * hipErrorOutOfMemory in ROCm 5.x (hipamd src/hip_memory.cpp at
 * afdc89f8, "if (!mem->create(hostPtr, ...)) { ... return
 * hipErrorOutOfMemory; }"), hipErrorInvalidValue in clr 6.x
 * (hipamd/src/hip_memory.cpp at 004c4f7c, the same branch). The H200
 * answers 1 (CUDA_ERROR_INVALID_VALUE). */
static hipError_t refusal(void)
{
    if (!sh_cfg.cuda && sh_cfg.personality == SH_LEGACY)
        return hipErrorOutOfMemory;
    return hipErrorInvalidValue;
}

/* More than the machine's memory cannot be pinned: the H200 answers 2
 * (CUDA_ERROR_OUT_OF_MEMORY) to a register spanning tens of terabytes, before
 * it looks at holes or at ranges registered already. */
static bool beyond_memory(size_t n)
{
    long pages = sysconf(_SC_PHYS_PAGES);
    return pages > 0 && n / page_size() > (size_t)pages;
}

hipError_t hipHostRegister(void *hostPtr, size_t sizeBytes, unsigned int flags)
{
    sh_init();
    /* clr ihipHostRegister: NULL, size 0 or a flag outside Portable, Mapped,
     * IoMemory, bit 3 (CoarseGrained in 5.x, ReadOnly in 6.x) and Uncached
     * -> hipErrorInvalidValue. */
    if (!hostPtr || !sizeBytes || (flags & ~SH_REGISTER_FLAGS))
        return sh_ret(hipErrorInvalidValue);
    hipError_t e = sh_capture_check(NULL);
    if (e != hipSuccess)
        return sh_ret(e);
    uintptr_t p = (uintptr_t)hostPtr;
    if (p + sizeBytes < p)
        return sh_ret(hipErrorInvalidValue);
    if (sh_fail(SH_FAIL_REGISTER))
        return sh_ret(hipErrorOutOfMemory);
    if (sh_cfg.cuda && beyond_memory(sizeBytes))
        return sh_ret(hipErrorOutOfMemory);
    bool read_only = (flags & SH_REGISTER_READ_ONLY) != 0;

    /* clr pins first (a refused range never reaches its object map); the
     * CUDA face and rocm7 look the range up first (712). */
    bool lookup_first = sh_cfg.cuda || sh_cfg.personality == SH_ROCM7;
    if (!lookup_first && sh_span_check(hostPtr, sizeBytes, read_only) != SPAN_OK)
        return sh_ret(refusal());

    /* Already registered (or overlapping): success, the old registration
     * and its size stay (the runtime keeps its old memory object), or
     * 712 (overlap_answer). */
    pthread_rwlock_rdlock(&sh_mem_lock);
    hipError_t known = overlap_answer(p, sizeBytes);
    bool overlap = find_overlap(p, sizeBytes) != NULL;
    pthread_rwlock_unlock(&sh_mem_lock);
    if (overlap)
        return known == hipSuccess ? hipSuccess : sh_ret(known);
    if (lookup_first && sh_span_check(hostPtr, sizeBytes, read_only) != SPAN_OK)
        return sh_ret(refusal());

    populate_pages(p, sizeBytes, read_only);

    struct sh_range *r = calloc(1, sizeof *r);
    if (!r)
        return sh_ret(hipErrorOutOfMemory);
    r->base = p;
    r->size = sizeBytes;
    r->flags = flags;
    r->kind = R_REGISTERED;
    r->device = sh_current_device();
    r->owner = sh_tl_owner;
    /* The lock of the pages and the insert are one step under the table's
     * lock: an unregister of a range sharing a page sees either both (and
     * keeps the page locked) or neither (and its unlock comes first). */
    pthread_rwlock_wrlock(&sh_mem_lock);
    if (find_overlap(p, sizeBytes)) {
        /* Lost a race with another register: its object wins. */
        known = overlap_answer(p, sizeBytes);
        pthread_rwlock_unlock(&sh_mem_lock);
        free(r);
        return known == hipSuccess ? hipSuccess : sh_ret(known);
    }
    r->locked = lock_pages(p, sizeBytes) == 0;
    int rc = table_insert(r);
    if (rc != 0)
        unpin_unshared(r);
    pthread_rwlock_unlock(&sh_mem_lock);
    if (rc != 0) {
        free(r);
        return sh_ret(hipErrorOutOfMemory);
    }
    return hipSuccess;
}

hipError_t hipHostUnregister(void *hostPtr)
{
    sh_init();
    if (!hostPtr)
        return sh_ret(hipErrorInvalidValue);
    hipError_t e = sh_capture_check(NULL);
    if (e != hipSuccess)
        return sh_ret(e);
    uintptr_t p = (uintptr_t)hostPtr;
    if (sh_fail(SH_FAIL_UNREGISTER))
        return sh_ret(hipErrorUnknown);

    pthread_rwlock_wrlock(&sh_mem_lock);
    struct sh_range *r = find_containing(p);
    if (!r || r->kind != R_REGISTERED) {
        pthread_rwlock_unlock(&sh_mem_lock);
        return sh_ret(hipErrorHostMemoryNotRegistered);
    }
    if (sh_cfg.cuda && (r->base != p || r->unregistering)) {
        /* CUDA: an interior pointer is an invalid value (the range keeps
         * working); a concurrent second unregister finds it gone. */
        pthread_rwlock_unlock(&sh_mem_lock);
        return sh_ret(r->base != p ? hipErrorInvalidValue : hipErrorHostMemoryNotRegistered);
    }
    if (r->base != p || r->unregistering)
        sh_die("runtime abort: Memobj map does not have ptr: 0x%lx", (unsigned long)p);
    if (r->attr_busy && !sh_cfg.cuda)
        sh_die("runtime abort: hipPointerGetAttributes raced hipHostUnregister on 0x%lx",
               (unsigned long)p);
    r->unregistering = true;
    pthread_rwlock_unlock(&sh_mem_lock);

    /* current, rocm7: every stream of the device; legacy: the null stream only. */
    if (sh_cfg.personality != SH_LEGACY)
        sh_sync(SYNC_ALL_DEVICES, NULL, 0, "hipHostUnregister");
    else
        sh_sync(SYNC_NULL_ALL_DEVICES, NULL, 0, "hipHostUnregister");
    if (!sh_cfg.cuda)
        sh_sleep_us(UNREG_WINDOW_US);

    /* The removal and the unlock are one step under the table's lock: a
     * register sharing a page either came first (its range is in the table,
     * the page stays locked) or comes after (it locks the page again). */
    pthread_rwlock_wrlock(&sh_mem_lock);
    table_remove(r);
    unpin_unshared(r);
    pthread_rwlock_unlock(&sh_mem_lock);
    free(r->ghost);
    free(r);
    return hipSuccess;
}

hipError_t hipHostGetDevicePointer(void **devPtr, void *hstPtr, unsigned int flags)
{
    sh_init();
    if (!devPtr || !hstPtr || flags != 0)
        return sh_ret(hipErrorInvalidValue);
    pthread_rwlock_rdlock(&sh_mem_lock);
    struct sh_range *r = find_containing((uintptr_t)hstPtr);
    bool ok = r && r->kind != R_DEVICE;
    pthread_rwlock_unlock(&sh_mem_lock);
    if (!ok)
        return sh_ret(hipErrorInvalidValue);
    *devPtr = hstPtr;
    return hipSuccess;
}

hipError_t hipHostGetFlags(unsigned int *flagsPtr, void *hostPtr)
{
    sh_init();
    if (!flagsPtr || !hostPtr)
        return sh_ret(hipErrorInvalidValue);
    pthread_rwlock_rdlock(&sh_mem_lock);
    struct sh_range *r = find_containing((uintptr_t)hostPtr);
    bool ok = r && r->kind != R_DEVICE;
    unsigned flags = ok ? r->flags : 0;
    pthread_rwlock_unlock(&sh_mem_lock);
    if (!ok)
        return sh_ret(hipErrorInvalidValue);
    *flagsPtr = flags;
    return hipSuccess;
}

/* The memory-type values of the personality's ABI: 5.x (legacy, current:
 * host 0, device 1) or 6.x (rocm7: unregistered 0, host 1, device 2). */
static enum hipMemoryType memory_type(bool device)
{
    if (sh_cfg.personality == SH_ROCM7)
        return (enum hipMemoryType)(device ? 2 : 1);
    return device ? hipMemoryTypeDevice : hipMemoryTypeHost;
}

/*
 * Unregistered host memory: legacy (5.x) returns hipErrorInvalidValue;
 * current and rocm7 (6.x) return hipSuccess with what 6.x reports for
 * hipMemoryTypeUnregistered (0): memoryType 0, device -1, both pointers
 * NULL, isManaged 0, allocationFlags 0. (In current's 5.x values 0 also
 * reads as host; rocm7 uses the 6.x values throughout.)
 */
hipError_t hipPointerGetAttributes(hipPointerAttribute_t *attributes, const void *ptr)
{
    sh_init();
    if (!attributes || !ptr)
        return sh_ret(hipErrorInvalidValue);
    uintptr_t p = (uintptr_t)ptr;
    hipPointerAttribute_t a;
    memset(&a, 0, sizeof a);

    pthread_rwlock_wrlock(&sh_mem_lock);
    struct sh_range *r = find_containing(p);
    if (!r) {
        pthread_rwlock_unlock(&sh_mem_lock);
        /* The runtime's lookup costs as much for unknown memory: a thread
         * hammering attribute queries never outruns a register loop. */
        sh_sleep_us(ATTR_WINDOW_US);
        if (sh_cfg.personality == SH_LEGACY)
            return sh_ret(hipErrorInvalidValue);
        a.memoryType = (enum hipMemoryType)0;
        a.device = -1;
        *attributes = a;
        return hipSuccess;
    }
    if (r->unregistering)
        sh_die("runtime abort: hipPointerGetAttributes raced hipHostUnregister on 0x%lx",
               (unsigned long)r->base);
    a.device = r->device;
    a.allocationFlags = r->flags;
    a.devicePointer = (void *)(r->base + (p - r->base));
    if (r->kind == R_DEVICE) {
        a.memoryType = memory_type(true);
    } else {
        a.memoryType = memory_type(false);
        a.hostPointer = (void *)p;
    }
    bool window = r->kind == R_REGISTERED;
    if (window)
        r->attr_busy++;
    pthread_rwlock_unlock(&sh_mem_lock);

    if (window) {
        /* The runtime's lookup holds the object this long; an unregister
         * arriving meanwhile finds attr_busy and aborts. */
        sh_sleep_us(ATTR_WINDOW_US);
        pthread_rwlock_wrlock(&sh_mem_lock);
        r->attr_busy--;
        pthread_rwlock_unlock(&sh_mem_lock);
    }
    *attributes = a;
    return hipSuccess;
}

/* ---- more allocations and queries programs link ------------------------- */

/* Managed memory: one mapping the host and the device both reach (the
 * simulated device reaches host memory directly), freed by hipFree. */
hipError_t hipMallocManaged(void **ptr, size_t size, unsigned int flags)
{
    sh_init();
    if (!ptr || size == 0 || (flags != hipMemAttachGlobal && flags != hipMemAttachHost))
        return sh_ret(hipErrorInvalidValue);
    hipError_t e = alloc_range(ptr, size, flags, R_HOSTMALLOC);
    if (e == hipSuccess) {
        pthread_rwlock_wrlock(&sh_mem_lock);
        struct sh_range *r = find_containing((uintptr_t)*ptr);
        if (r)
            r->managed = true;
        pthread_rwlock_unlock(&sh_mem_lock);
    }
    return sh_ret(e);
}

/* Rows padded to a multiple of 256 bytes. */
hipError_t hipMallocPitch(void **ptr, size_t *pitch, size_t width, size_t height)
{
    sh_init();
    if (!ptr || !pitch)
        return sh_ret(hipErrorInvalidValue);
    size_t p = (width + 255) & ~(size_t)255;
    if (width == 0 || height == 0 || height > SIZE_MAX / p) {
        *ptr = NULL;
        *pitch = p;
        return width == 0 || height == 0 ? hipSuccess : sh_ret(hipErrorOutOfMemory);
    }
    hipError_t e = alloc_range(ptr, p * height, 0, R_DEVICE);
    if (e == hipSuccess)
        *pitch = p;
    return sh_ret(e);
}

static bool managed_range(const void *p, size_t n)
{
    pthread_rwlock_rdlock(&sh_mem_lock);
    struct sh_range *r = find_containing((uintptr_t)p);
    bool ok = r && r->managed && (uintptr_t)p - r->base + n <= r->size;
    pthread_rwlock_unlock(&sh_mem_lock);
    return ok;
}

/* Advice changes nothing in the model; it must name managed memory. */
hipError_t hipMemAdvise(const void *dev_ptr, size_t count, hipMemoryAdvise advice, int device)
{
    sh_init();
    (void)advice;
    if (!dev_ptr || count == 0 || !managed_range(dev_ptr, count))
        return sh_ret(hipErrorInvalidValue);
    if (device != hipCpuDeviceId && (device < 0 || device >= sh_cfg.ndevices))
        return sh_ret(hipErrorInvalidDevice);
    return hipSuccess;
}

/* A prefetch is a device operation that moves nothing. */
hipError_t hipMemPrefetchAsync(const void *dev_ptr, size_t count, int device, hipStream_t stream)
{
    sh_init();
    if (!dev_ptr || count == 0 || !managed_range(dev_ptr, count))
        return sh_ret(hipErrorInvalidValue);
    if (device != hipCpuDeviceId && (device < 0 || device >= sh_cfg.ndevices))
        return sh_ret(hipErrorInvalidDevice);
    struct sh_work w = { .kind = W_NOP };
    return sh_ret(sh_enqueue_handle(stream, &w, NULL, NULL));
}

/* No advice is kept: every attribute reads as never advised (0; the
 * locations -2, "invalid"). */
hipError_t hipMemRangeGetAttribute(void *data, size_t data_size, hipMemRangeAttribute attribute,
                                   const void *dev_ptr, size_t count)
{
    sh_init();
    if (!data || data_size < 4 || (data_size & 3) || !dev_ptr || !managed_range(dev_ptr, count))
        return sh_ret(hipErrorInvalidValue);
    int v = 0;
    switch ((int)attribute) {
    case hipMemRangeAttributeReadMostly:
    case hipMemRangeAttributeCoherencyMode:
        break;
    case hipMemRangeAttributePreferredLocation:
    case hipMemRangeAttributeLastPrefetchLocation:
        v = -2;
        break;
    case hipMemRangeAttributeAccessedBy:
        memset(data, 0xff, data_size); /* no device: -1 entries */
        return hipSuccess;
    default:
        return sh_ret(hipErrorInvalidValue);
    }
    memcpy(data, &v, 4);
    return hipSuccess;
}

hipError_t hipMemGetAddressRange(hipDeviceptr_t *pbase, size_t *psize, hipDeviceptr_t dptr)
{
    sh_init();
    struct sh_range r;
    if (!dptr || !sh_mem_lookup(dptr, &r))
        return sh_ret(hipErrorNotFound);
    if (pbase)
        *pbase = (hipDeviceptr_t)r.base;
    if (psize)
        *psize = r.size;
    return hipSuccess;
}

/* One attribute of known memory; unknown memory is an invalid value. */
hipError_t hipPointerGetAttribute(void *data, hipPointer_attribute attribute, hipDeviceptr_t ptr)
{
    sh_init();
    struct sh_range r;
    if (!data || !ptr || !sh_mem_lookup(ptr, &r))
        return sh_ret(hipErrorInvalidValue);
    uintptr_t p = (uintptr_t)ptr;
    bool dev = r.kind == R_DEVICE;
    switch (attribute) {
    case HIP_POINTER_ATTRIBUTE_MEMORY_TYPE:
        *(unsigned *)data = (unsigned)memory_type(dev);
        break;
    case HIP_POINTER_ATTRIBUTE_DEVICE_POINTER:
        *(void **)data = (void *)p;
        break;
    case HIP_POINTER_ATTRIBUTE_HOST_POINTER:
        *(void **)data = dev ? NULL : (void *)p;
        break;
    case HIP_POINTER_ATTRIBUTE_IS_MANAGED:
        *(int *)data = r.managed;
        break;
    case HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
        *(int *)data = r.device;
        break;
    case HIP_POINTER_ATTRIBUTE_RANGE_START_ADDR:
        *(void **)data = (void *)r.base;
        break;
    case HIP_POINTER_ATTRIBUTE_RANGE_SIZE:
        *(size_t *)data = r.size;
        break;
    case HIP_POINTER_ATTRIBUTE_MAPPED:
        *(int *)data = 1;
        break;
    case HIP_POINTER_ATTRIBUTE_BUFFER_ID:
        *(unsigned long long *)data = (unsigned long long)r.base;
        break;
    default:
        return sh_ret(hipErrorInvalidValue);
    }
    return hipSuccess;
}

/* The deprecated spelling of hipHostMalloc. */
hipError_t hipHostAlloc(void **ptr, size_t size, unsigned int flags)
{
    sh_init();
    return sh_ret(alloc_range(ptr, size, flags, R_HOSTMALLOC));
}
