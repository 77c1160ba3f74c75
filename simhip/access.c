/*
 * access.c - the device's accesses to memory: every byte a copy or a fill
 * touches must lie in a live range of the table and be mapped, or the
 * device faults (the fault line, then abort), as a GPU does.
 *
 * The CUDA face (sh_cfg.cuda, set by simcuda) keeps the pinned pages of a
 * registration as CUDA does: after free/munmap of a still-registered range
 * the device keeps using the pages it pinned, which the process no longer
 * maps. A page is still the pinned one while it is mapped and mlocked (a
 * locked page answers EINVAL to MADV_COLD; a new mapping at that address is
 * not locked); otherwise device accesses land in the range's "ghost" (zeros
 * until the device writes), silently.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "memory_int.h"

/* ---- device access ------------------------------------------------------ */

/* First page of [a, a+n) that is not mapped (mincore fails), or 0. */
static uintptr_t first_unmapped(uintptr_t a, size_t n)
{
    uintptr_t pg = sh_page_size();
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
        struct sh_range *r = sh_mem_find_containing(p);
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
                     (unsigned long)(uintptr_t)&sh_cfg, (unsigned long)(addr & ~(sh_page_size() - 1)));
    ssize_t w = write(2, buf, (size_t)n);
    (void)w;
    abort();
}

/* ---- the CUDA face's device view (sh_mem_lock held, read) -------------- */

/* Is the page at pg still the one the registration pinned? */
static bool pinned_page_present(const struct sh_range *r, uintptr_t pg)
{
    unsigned char v;
    if (mincore((void *)pg, sh_page_size(), &v) != 0)
        return false;
    if (!r->locked)
        return true;
    return madvise((void *)pg, sh_page_size(), MADV_COLD) != 0 && errno == EINVAL;
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
    struct sh_range *r = sh_mem_find_containing(a);
    if (!r)
        gpu_fault(a);
    uintptr_t pg = sh_page_size();
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
