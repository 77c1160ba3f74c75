/*
 * legacy_cuda.h - helpers of the legacy CUDA driver-API programs.
 *
 * The programs here are written the way existing CUDA driver-API code is
 * written (including its mistakes), linked with -lcuda, and run on simcuda
 * (LD_LIBRARY_PATH=build/simcuda). Each prints "OK" and exits 0 when its
 * work completed and its data verified; otherwise it says what went wrong
 * and exits nonzero. run.sh checks the evidence of each hazard.
 */
#ifndef LEGACY_CUDA_H
#define LEGACY_CUDA_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "simcuda.h"

static inline const char *lc_name(CUresult e)
{
    const char *s = NULL;
    cuGetErrorName(e, &s);
    return s ? s : "?";
}

/* A driver call that must succeed: on failure name it, its error, exit 1. */
#define CHECK(call) CHECK_AS(CUresult, CUDA_SUCCESS, lc_name, call)

/* dlopen of a stand-in library in rt/ beside the program, by its full path:
 * a bare name would be searched from whoever calls the loader (a sanitizer
 * runtime's dlopen interceptor has no RUNPATH, and the system's own
 * libcudart may answer). */
static inline void *lc_dlopen_rt(const char *name, int mode)
{
    char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
    if (n <= 0)
        return NULL;
    path[n] = '\0';
    char *slash = strrchr(path, '/');
    if (!slash || snprintf(slash + 1, sizeof(path) - (size_t)(slash + 1 - path), "rt/%s", name) >=
                      (int)(sizeof(path) - (size_t)(slash + 1 - path)))
        return NULL;
    return dlopen(path, mode);
}

/* cuInit, the primary context of device 0 made current. */
static inline CUcontext lc_init(void)
{
    CUdevice dev;
    CUcontext ctx;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    return ctx;
}

/* A kernel's body: n ints of host memory p read through the device, add
 * added, written back (tmp: n ints of the kernel's own). */
static inline void lc_device_add(int *p, int *tmp, size_t n, int add)
{
    simcudaDeviceRead(tmp, p, n * sizeof(int));
    for (size_t i = 0; i < n; i++)
        tmp[i] += add;
    simcudaDeviceWrite(p, tmp, n * sizeof(int));
}

static inline int lc_pattern(size_t i, int seed)
{
    return (int)((i * 2654435761u) ^ (unsigned)seed) & 0x3fffffff;
}

/* Check p[i] == pattern(i, seed); report the first mismatch, with a note
 * when it is an earlier batch's data or zeros (stale). */
static inline int lc_verify(const char *what, const int *p, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] != lc_pattern(i, seed)) {
            fprintf(stderr, "%s: corrupted data at element %zu: got %d, want %d (stale)\n", what,
                    i, p[i], lc_pattern(i, seed));
            return 0;
        }
    }
    return 1;
}

/* The staging pipeline of the host-function programs: each batch fills
 * staging (n ints), pins it with reg, copies it to the device, enqueues
 * unpin(staging) as a host function with launch, copies it back and checks
 * it. 1 when every batch came back right; a failing call exits (CHECK). */
static inline int lc_staging_batches(int *staging, size_t n, int batches,
                                     CUresult (*reg)(void *, size_t),
                                     CUresult (*launch)(CUstream, CUhostFn, void *), CUhostFn unpin)
{
    CUstream s;
    CUdeviceptr d;
    int *out;
    size_t bytes = n * sizeof(int);
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CHECK(cuMemAlloc_v2(&d, bytes));
    CHECK(cuMemHostAlloc((void **)&out, bytes, 0));
    int ok = 1;
    for (int b = 0; ok && b < batches; b++) {
        for (size_t i = 0; i < n; i++)
            staging[i] = lc_pattern(i, b);
        CHECK(reg(staging, bytes));
        CHECK(cuMemcpyHtoDAsync_v2(d, staging, bytes, s));
        CHECK(launch(s, unpin, staging));
        CHECK(cuMemcpyDtoHAsync_v2(out, d, bytes, s));
        CHECK(cuStreamSynchronize(s));
        ok = lc_verify("batch", out, n, b);
    }
    CHECK(cuMemFreeHost(out));
    CHECK(cuMemFree_v2(d));
    CHECK(cuStreamDestroy_v2(s));
    return ok;
}

#endif
