/*
 * cu_bench.h - helpers of the CUDA benchmark programs (driver API, on
 * simcuda): the same "BENCH key=value" line as bench.h's HIP programs.
 */
#ifndef SAFEPIN_CU_BENCH_H
#define SAFEPIN_CU_BENCH_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "simcuda.h"

#define CHECK(call)                                                                \
    do {                                                                           \
        CUresult e_ = (call);                                                      \
        if (e_ != CUDA_SUCCESS) {                                                  \
            fprintf(stderr, "%s:%d: %s: %d\n", __FILE__, __LINE__, #call, (int)e_); \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

static inline uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline void sleep_us(unsigned us)
{
    struct timespec ts = {us / 1000000u, (long)(us % 1000000u) * 1000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

__attribute__((unused)) static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v; the p-th percentile, nearest rank. */
static inline double percentile(double *v, size_t n, double p)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof *v, cmp_double);
    size_t k = (size_t)(p / 100.0 * (double)n + 0.999999);
    if (k < 1)
        k = 1;
    if (k > n)
        k = n;
    return v[k - 1];
}

static inline int arg_int(int argc, char **argv, const char *key, int def)
{
    size_t n = strlen(key);
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], key, n) == 0 && argv[i][n] == '=')
            return atoi(argv[i] + n + 1);
    return def;
}

static inline CUcontext cb_init(void)
{
    CUdevice dev;
    CUcontext ctx;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    return ctx;
}

/* A kernel of `us` microseconds that touches nothing. */
struct cb_timed {
    unsigned us;
    volatile int started;
};
__attribute__((unused)) static void cb_timed_fn(void *arg)
{
    struct cb_timed *k = arg;
    k->started = 1;
    sleep_us(k->us);
}

#endif
