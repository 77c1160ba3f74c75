/*
 * util.c - allocation that bypasses safepin's own hooks, the clock, the page
 * size, libc's own free and munmap.
 *
 * Memory comes from glibc's __libc_* functions, so the library's own free
 * hook never sees it; allocation failure is a return value, never fatal.
 */
#include "util.h"

#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

__thread int sp_tls_in_hostfn __attribute__((tls_model("initial-exec")));

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t sz);
extern void __libc_free(void *p);

static _Atomic(sp_mem_fail_fn) g_mem_fail;

#ifdef __SANITIZE_THREAD__
/* glibc's allocator orders a free and the reuse of that memory with locks
 * ThreadSanitizer cannot see: a block freed by one thread and handed to
 * another would be reported as a race. A mutex it sees orders every free
 * before every later allocation (ThreadSanitizer builds only). */
static pthread_mutex_t g_mem_order = PTHREAD_MUTEX_INITIALIZER;
static void mem_order(void)
{
    pthread_mutex_lock(&g_mem_order);
    pthread_mutex_unlock(&g_mem_order);
}
#else
static void mem_order(void) {}
#endif

static bool mem_should_fail(size_t n)
{
    sp_mem_fail_fn fn = atomic_load_explicit(&g_mem_fail, memory_order_acquire);
    return (fn != NULL && fn(n) != 0) || sp_test_fail(SP_TF_ALLOC);
}

/* Like malloc, but never through safepin's hooks. NULL on failure. */
void *sp_mem_alloc(size_t n)
{
    if (mem_should_fail(n))
        return NULL;
    void *p = __libc_malloc(n);
    mem_order();
    return p;
}

/* Like calloc, but never through safepin's hooks. NULL on failure. */
void *sp_mem_calloc(size_t n, size_t sz)
{
    if (mem_should_fail(n * sz))
        return NULL;
    void *p = __libc_calloc(n, sz);
    mem_order();
    return p;
}

/* Frees what sp_mem_alloc/sp_mem_calloc returned; NULL is a no-op. */
void sp_mem_free(void *p)
{
    mem_order();
    __libc_free(p);
}

void sp_mem_init(void)
{
    __libc_free(__libc_malloc(1));
}

/* Testing only: see util.h. */
void sp_mem_set_fail_hook(sp_mem_fail_fn fn)
{
    atomic_store_explicit(&g_mem_fail, fn, memory_order_release);
}

uint64_t sp_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A thread's cached id is valid while its generation is the process's:
 * the fork child handler bumps it, so the child's one thread asks again. */
static unsigned g_tid_gen = 1;
static __thread int tls_tid;
static __thread unsigned tls_tid_gen;

int sp_gettid(void)
{
    unsigned gen = __atomic_load_n(&g_tid_gen, __ATOMIC_RELAXED);
    if (tls_tid_gen != gen) {
        tls_tid = (int)syscall(SYS_gettid);
        tls_tid_gen = gen;
    }
    return tls_tid;
}

void sp_gettid_fork_child(void) { __atomic_fetch_add(&g_tid_gen, 1, __ATOMIC_RELAXED); }

size_t sp_page_size(void)
{
    static size_t pg;
    size_t v = __atomic_load_n(&pg, __ATOMIC_RELAXED);
    if (!v) {
        v = (size_t)sysconf(_SC_PAGESIZE);
        __atomic_store_n(&pg, v, __ATOMIC_RELAXED);
    }
    return v;
}

static void (*libc_free)(void *);
static int (*libc_munmap)(void *, size_t);

void sp_libc_set(void (*free_fn)(void *), int (*munmap_fn)(void *, size_t))
{
    __atomic_store_n(&libc_free, free_fn, __ATOMIC_RELEASE);
    __atomic_store_n(&libc_munmap, munmap_fn, __ATOMIC_RELEASE);
}

void sp_libc_free(void *p)
{
    void (*f)(void *) = __atomic_load_n(&libc_free, __ATOMIC_ACQUIRE);
    if (f)
        f(p);
}

int sp_libc_munmap(void *addr, size_t len)
{
    int (*f)(void *, size_t) = __atomic_load_n(&libc_munmap, __ATOMIC_ACQUIRE);
    return f ? f(addr, len) : (int)syscall(SYS_munmap, addr, len);
}

int sp_phdr_span(const struct dl_phdr_info *info, unsigned flags, uintptr_t *lo, uintptr_t *hi)
{
    uintptr_t l = UINTPTR_MAX, h = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || (ph->p_flags & flags) != flags)
            continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (a < l)
            l = a;
        if (a + ph->p_memsz > h)
            h = a + ph->p_memsz;
    }
    *lo = l;
    *hi = h;
    return h > l;
}
