/*
 * log_noalloc.c - does a diagnostic printed from inside a hook allocate?
 *
 * This program replaces malloc, calloc, realloc and free (an executable's
 * definitions come before every library's, libc's own internal calls
 * included) with counting wrappers around glibc's __libc_* functions.
 * It registers a buffer, unregisters it, and then, with counting on,
 * unregisters it again: under safepin that is a double-unregister, printed
 * with its stacks (symbolized by addr2line unless symbolize=0). Prints
 * "allocations=N" for the counted call and exits 0. A first counted
 * asprintf, which allocates inside libc, proves that the counter sees
 * libc's own allocations ("counter check: N", N > 0).
 *
 * Counting is per thread: safepin's reaper may allocate meanwhile.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hip/hip_runtime_api.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

static __thread int counting;
static __thread long allocations;

void *malloc(size_t n)
{
    allocations += counting;
    return __libc_malloc(n);
}

void *calloc(size_t n, size_t sz)
{
    allocations += counting;
    return __libc_calloc(n, sz);
}

void *realloc(void *p, size_t n)
{
    allocations += counting;
    return __libc_realloc(p, n);
}

void free(void *p)
{
    __libc_free(p);
}

int main(void)
{
    static char buf[1 << 16] __attribute__((aligned(4096)));
    memset(buf, 1, sizeof buf);
    if (hipHostRegister(buf, sizeof buf, 0) != hipSuccess) {
        fprintf(stderr, "hipHostRegister failed\n");
        return 1;
    }
    if (hipHostUnregister(buf) != hipSuccess) {
        fprintf(stderr, "hipHostUnregister failed\n");
        return 1;
    }
    counting = 1;
    char *probe = NULL;
    if (asprintf(&probe, "%d", 42) < 0)
        probe = NULL;
    counting = 0;
    printf("counter check: %ld\n", allocations);
    free(probe);
    allocations = 0;
    counting = 1;
    hipError_t e = hipHostUnregister(buf);
    counting = 0;
    printf("second unregister: %d\nallocations=%ld\n", (int)e, allocations);
    return 0;
}
