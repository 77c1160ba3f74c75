/*
 * memory.c - the range table (hipMalloc, hipHostMalloc and registered host
 * ranges) and the allocations: hipMalloc, hipHostMalloc, managed and
 * pitched memory, with the runtime behaviours of DESIGN section 3.
 *
 * The table is a sorted array of non-overlapping ranges under sh_mem_lock.
 * A device address of registered or hipHostMalloc memory is the host
 * address itself (identity mapping); hipMalloc memory is simhip's own mmap.
 * The other files of simhip's memory (memory_int.h) read and change it:
 * the device's accesses (access.c), registrations (register.c) and
 * pointer queries (attributes.c).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "memory_int.h"

pthread_rwlock_t sh_mem_lock = PTHREAD_RWLOCK_INITIALIZER;
_Thread_local void *sh_tl_owner;

static struct sh_range **ranges;
static size_t nranges, cranges;

uintptr_t sh_page_size(void)
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

struct sh_range *sh_mem_find_containing(uintptr_t a)
{
    size_t i = upper_bound(a);
    if (i == 0)
        return NULL;
    struct sh_range *r = ranges[i - 1];
    return a - r->base < r->size ? r : NULL;
}

struct sh_range *sh_mem_find_overlap(uintptr_t b, size_t n)
{
    struct sh_range *r = sh_mem_find_containing(b);
    if (r)
        return r;
    size_t i = upper_bound(b);
    if (i < nranges && ranges[i]->base - b < n)
        return ranges[i];
    return NULL;
}

int sh_mem_table_insert(struct sh_range *r)
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

void sh_mem_table_remove(struct sh_range *r)
{
    for (size_t i = 0; i < nranges; i++) {
        if (ranges[i] == r) {
            memmove(&ranges[i], &ranges[i + 1], (nranges - i - 1) * sizeof *ranges);
            nranges--;
            return;
        }
    }
}

/* Does a registration other than r cover a byte of the page at pg? Scans
 * the table (sh_mem_lock held): ranges do not overlap, so their ends are
 * sorted as their bases are, and the walk down from the last range
 * starting in the page stops at the first one ending below it. */
bool sh_mem_page_shared(uintptr_t pg, const struct sh_range *r)
{
    size_t i = upper_bound(pg + sh_page_size() - 1);
    while (i > 0) {
        const struct sh_range *q = ranges[--i];
        if (q->base + q->size <= pg)
            return false;
        if (q != r && q->kind == R_REGISTERED)
            return true;
    }
    return false;
}

bool sh_mem_covered(const void *ptr, size_t n)
{
    uintptr_t p = (uintptr_t)ptr, end = p + n;
    bool ok = true;
    pthread_rwlock_rdlock(&sh_mem_lock);
    while (p < end) {
        struct sh_range *r = sh_mem_find_containing(p);
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
    struct sh_range *r = sh_mem_find_containing((uintptr_t)p);
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
    struct sh_range *r = sh_mem_find_containing((uintptr_t)ptr);
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
    int rc = sh_mem_table_insert(r);
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
    struct sh_range *r = sh_mem_find_containing((uintptr_t)p);
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
    r = sh_mem_find_containing((uintptr_t)p);
    ok = r && r->base == (uintptr_t)p && r->kind != R_REGISTERED;
    if (ok)
        sh_mem_table_remove(r);
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
        struct sh_range *r = sh_mem_find_containing((uintptr_t)*ptr);
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
    struct sh_range *r = sh_mem_find_containing((uintptr_t)p);
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

/* The deprecated spelling of hipHostMalloc. */
hipError_t hipHostAlloc(void **ptr, size_t size, unsigned int flags)
{
    sh_init();
    return sh_ret(alloc_range(ptr, size, flags, R_HOSTMALLOC));
}
