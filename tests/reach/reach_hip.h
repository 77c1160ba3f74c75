/*
 * reach_hip.h - what the HIP reach programs share (dlopen_reach.c,
 * dlvsym_reach.c): the function types they look up, and the "kernel" their
 * hazard runs: a host function on a non-blocking stream that writes into the
 * registered buffer through the device (simhip's device write), late.
 */
#ifndef REACH_HIP_H
#define REACH_HIP_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
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

/* The hazard, through the functions the program looked up: a buffer
 * unregistered while a non-blocking stream's kernel still writes into it,
 * then freed. Prints "OK" and returns 0 when the kernel's data all landed. */
static int reach_hazard(reg_t reg, unreg_t unreg, screate_t screate, ssync_t ssync, launch_t launch)
{
    hipStream_t s;
    if (screate(&s, hipStreamNonBlocking) != hipSuccess)
        return 1;
    size_t n = 1 << 16;
    int *buf = malloc(n * sizeof(int));
    int *shadow = calloc(n, sizeof(int));
    if (reg(buf, n * sizeof(int), 0) != hipSuccess) {
        fprintf(stderr, "hipHostRegister failed\n");
        return 1;
    }
    struct job j = {buf, n, shadow};
    if (launch(s, kernel, &j) != hipSuccess)
        return 1;
    if (unreg(buf) != hipSuccess) { /* the kernel is still running */
        fprintf(stderr, "hipHostUnregister failed\n");
        return 1;
    }
    free(buf);
    if (ssync(s) != hipSuccess)
        return 1;
    for (size_t i = 0; i < n; i++) {
        if (shadow[i] != (int)(i * 7 + 1)) {
            fprintf(stderr, "corrupted data at %zu\n", i);
            return 1;
        }
    }
    printf("OK\n");
    return 0;
}

#endif
