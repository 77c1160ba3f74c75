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

#include "bench_common.h"
#include "simcuda.h"

#define CHECK(call)                                                                \
    do {                                                                           \
        CUresult e_ = (call);                                                      \
        if (e_ != CUDA_SUCCESS) {                                                  \
            fprintf(stderr, "%s:%d: %s: %d\n", __FILE__, __LINE__, #call, (int)e_); \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

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
