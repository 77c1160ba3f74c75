/*
 * register.c - hipHostRegister and hipHostUnregister with the runtime
 * behaviours of DESIGN section 3: what a pinning runtime can lock, the
 * pages' locks, the answers to overlaps and refusals.
 *
 * Race detection (hipPointerGetAttributes vs hipHostUnregister on one
 * range): each range carries an "unregistering" marker, held for the whole
 * unregister (synchronize, munlock, and a fixed UNREG_WINDOW_US), and an
 * "attr_busy" count, held for ATTR_WINDOW_US by each attribute query
 * (attributes.c; which takes that long for unknown memory too). Either
 * side finding the other's marker aborts, as the real runtime crashes.
 *
 * The CUDA face (sh_cfg.cuda) keeps the pinned pages of a registration
 * after free/munmap (access.c): re-registering that address is 712 until
 * the old range is unregistered; runtime aborts become error codes.
 *
 * Both faces keep a page locked while any registration covers it (ranges
 * may share a page at their ends): a register locks its pages and an
 * unregister unlocks those no other registration covers, each in one step
 * with its table change under sh_mem_lock (written), so that no neighbour's
 * unregister can unlock a page under a registration it did not see.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "memory_int.h"

#define UNREG_WINDOW_US 50

/* Linux 5.14's prefault advice (older C libraries lack the names). */
#define SH_MADV_POPULATE_READ 22
#define SH_MADV_POPULATE_WRITE 23

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
    uintptr_t pg = sh_page_size();
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
    uintptr_t pg = sh_page_size();
    uintptr_t start = p & ~(pg - 1), end = p + size;
    if (!sh_cfg.cuda)
        return mlock((void *)start, end - start);
    if (syscall(SYS_mlock, (void *)start, end - start) != 0)
        return -1;
    return madvise((void *)start, pg, MADV_COLD) != 0 && errno == EINVAL ? 0 : -1;
}

/* Unlock the pages of r that no other live registration covers (sh_mem_lock
 * held for writing, with r's removal from the table). mlock does not count:
 * unlocking a page a neighbour shares would unpin it under the neighbour,
 * whose device accesses would then miss the process's page (the CUDA
 * face's ghost). A driver keeps a page pinned while any registration
 * covers it. Only the first and the last page can be shared. */
static void unpin_unshared(const struct sh_range *r)
{
    uintptr_t pg = sh_page_size();
    uintptr_t s = r->base & ~(pg - 1);
    uintptr_t e = ((r->base + r->size - 1) | (pg - 1)) + 1;
    if (sh_mem_page_shared(s, r))
        s += pg;
    if (e > s && sh_mem_page_shared(e - pg, r))
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
    if (sh_cfg.cuda && sh_mem_find_overlap(p, n))
        return hipErrorHostMemoryAlreadyRegistered;
    if (sh_cfg.personality == SH_ROCM7 && sh_mem_find_containing(p))
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
    return pages > 0 && n / sh_page_size() > (size_t)pages;
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
    bool overlap = sh_mem_find_overlap(p, sizeBytes) != NULL;
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
    if (sh_mem_find_overlap(p, sizeBytes)) {
        /* Lost a race with another register: its object wins. */
        known = overlap_answer(p, sizeBytes);
        pthread_rwlock_unlock(&sh_mem_lock);
        free(r);
        return known == hipSuccess ? hipSuccess : sh_ret(known);
    }
    r->locked = lock_pages(p, sizeBytes) == 0;
    int rc = sh_mem_table_insert(r);
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
    struct sh_range *r = sh_mem_find_containing(p);
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
    sh_mem_table_remove(r);
    unpin_unshared(r);
    pthread_rwlock_unlock(&sh_mem_lock);
    free(r->ghost);
    free(r);
    return hipSuccess;
}
