/*
 * reach_hip.h - what the HIP reach programs share (dlopen_reach.c,
 * dlvsym_reach.c): the function types they look up, and the "kernel" their
 * hazard runs: a host function on a non-blocking stream that writes into the
 * registered buffer through the device (simhip's device write), late.
 */
#ifndef REACH_HIP_H
#define REACH_HIP_H

#include <stddef.h>
#include <string.h>
#include <unistd.h>
#include <hip/hip_runtime_api.h>

typedef hipError_t (*reg_t)(void *, size_t, unsigned);
typedef hipError_t (*unreg_t)(void *);
typedef hipError_t (*screate_t)(hipStream_t *, unsigned);
typedef hipError_t (*ssync_t)(hipStream_t);
typedef hipError_t (*launch_t)(hipStream_t, void (*)(void *), void *);
typedef void (*dwrite_t)(void *, const void *, size_t);

/* simhip's device write, looked up by the program. */
static dwrite_t dev_write;

struct job {
    int *dst;
    size_t n;
    int *shadow;
};

/* 50 ms late, the "device" writes i * 7 + 1 into dst[i], then copies dst to
 * shadow: what the program checks once the stream is done. */
static void kernel(void *arg)
{
    struct job *j = arg;
    usleep(50000);
    for (size_t i = 0; i < j->n; i++) {
        int v = (int)(i * 7 + 1);
        dev_write(j->dst + i, &v, sizeof(v));
    }
    memcpy(j->shadow, j->dst, j->n * sizeof(int));
}

#endif
