/*
 * legacy.h - the few helpers the legacy programs share.
 *
 * The programs in this directory are written the way existing HIP code is
 * written (including its mistakes). This header only saves them from
 * repeating the boilerplate: error checking, a data pattern to verify, and
 * two small "kernels" (C functions run by simhip on a stream, see simhip.h).
 *
 * Every program prints "OK" and exits 0 when all its work completed and its
 * data verified; otherwise it says what was wrong and exits nonzero.
 */
#ifndef LEGACY_H
#define LEGACY_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hip_check.h"
#include "simhip.h"

/* How many expectations failed so far (see EXPECT_ERR, legacy_verify). */
static inline int *legacy_failures(void)
{
    static int failures;
    return &failures;
}

/* A HIP call that must return exactly `want`: otherwise say so and count a
 * failure (the program carries on, so that later checks still report). */
#define EXPECT_ERR(call, want)                                                 \
    do {                                                                       \
        hipError_t err_ = (call);                                              \
        if (err_ != (want)) {                                                  \
            fprintf(stderr, "%s:%d: %s returned %s (%d), expected %s (%d)\n",  \
                    __FILE__, __LINE__, #call, hipGetErrorName(err_),          \
                    (int)err_, hipGetErrorName(want), (int)(want));            \
            (*legacy_failures())++;                                            \
        }                                                                      \
    } while (0)

/* The data pattern: element i of a buffer filled with `seed`. */
static inline int pattern(size_t i, int seed)
{
    return (int)((i * 2654435761u) ^ (unsigned)seed) & 0x3fffffff;
}

/* Fill n ints on the host with pattern(first + i, seed). */
static inline void legacy_fill(int *p, size_t n, size_t first, int seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = pattern(first + i, seed);
}

/* Check p[i] == pattern(first + i, seed) + add; report the first mismatch. */
static inline int legacy_verify(const char *what, const int *p, size_t n,
                                size_t first, int seed, int add)
{
    for (size_t i = 0; i < n; i++) {
        int want = pattern(first + i, seed) + add;
        if (p[i] != want) {
            fprintf(stderr, "%s: corrupted data at element %zu: got %d, want %d\n",
                    what, first + i, p[i], want);
            (*legacy_failures())++;
            return 0;
        }
    }
    return 1;
}

/* End of main: "OK" and 0 when nothing failed. */
/* The runtime's HIP_VERSION (hipRuntimeGetVersion; 0 if it has none):
 * programs that check answers which changed between releases ask it. */
static inline int legacy_runtime_version(void)
{
    int v = 0;
    return hipRuntimeGetVersion(&v) == hipSuccess ? v : 0;
}

static inline int legacy_finish(void)
{
    if (*legacy_failures()) {
        fprintf(stderr, "FAILED: %d check(s) failed\n", *legacy_failures());
        return 1;
    }
    puts("OK");
    fflush(stdout);
    return 0;
}

/* ---- the revive grace (the free_grace_* programs) --------------------------
 * A malloc'd block of n bytes, registered and unregistered at once: of 1 MiB
 * or more, under safepin its release then waits out a revive grace (an
 * identical re-register would revive it). NULL if it cannot be made. */
static inline char *legacy_grace_block(size_t n)
{
    char *a = malloc(n);
    if (!a)
        return NULL;
    memset(a, 1, n);
    if (hipHostRegister(a, n, 0) != hipSuccess || hipHostUnregister(a) != hipSuccess) {
        fprintf(stderr, "legacy_grace_block: register/unregister of %zu bytes failed\n", n);
        free(a);
        return NULL;
    }
    return a;
}

/* A host function (stream callback) that waits until *arg (an int) is set. */
static inline void legacy_wait_flag(hipStream_t st, hipError_t e, void *arg)
{
    (void)st;
    (void)e;
    while (!__atomic_load_n((int *)arg, __ATOMIC_ACQUIRE))
        usleep(100);
}

/* ---- kernels --------------------------------------------------------------
 * work_us models a long-running kernel: it computes that long before it
 * touches memory, which makes "the kernel is still running" windows
 * deterministic. The argument block must stay alive until the kernel ran. */

struct kargs {
    int *dev;          /* device address of the data */
    size_t n;          /* elements */
    size_t first;      /* index of dev[0] in the pattern (fill) */
    int seed;          /* pattern seed (fill) */
    int add;           /* value to add (add) */
    unsigned work_us;  /* compute time before the first access */
};

#define LEGACY_CHUNK 1024

/* dev[i] += add */
static inline void add_kernel(void *p)
{
    const struct kargs *a = p;
    int tmp[LEGACY_CHUNK];
    if (a->work_us)
        usleep(a->work_us);
    for (size_t i = 0; i < a->n; i += LEGACY_CHUNK) {
        size_t m = a->n - i < LEGACY_CHUNK ? a->n - i : LEGACY_CHUNK;
        simhipDeviceRead(tmp, a->dev + i, m * sizeof(int));
        for (size_t j = 0; j < m; j++)
            tmp[j] += a->add;
        simhipDeviceWrite(a->dev + i, tmp, m * sizeof(int));
    }
}

/* dev[i] = pattern(first + i, seed) */
static inline void fill_kernel(void *p)
{
    const struct kargs *a = p;
    int tmp[LEGACY_CHUNK];
    if (a->work_us)
        usleep(a->work_us);
    for (size_t i = 0; i < a->n; i += LEGACY_CHUNK) {
        size_t m = a->n - i < LEGACY_CHUNK ? a->n - i : LEGACY_CHUNK;
        for (size_t j = 0; j < m; j++)
            tmp[j] = pattern(a->first + i + j, a->seed);
        simhipDeviceWrite(a->dev + i, tmp, m * sizeof(int));
    }
}

#endif /* LEGACY_H */
