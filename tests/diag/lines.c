/*
 * lines.c - one mode per diagnostic code, each call of the program that
 * safepin names written as a statement that ends its line, the common case
 * where a return address belongs to the next line:
 *   lines <code>
 * A call's line carries a marker comment (at, reg, unreg: the stack it is
 * the innermost program frame of); tests/diag/lines.sh compares the lines
 * safepin reports with the markers' lines. Return values are not checked:
 * the calls are bugs on purpose.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <hip/hip_runtime_api.h>
#include "simhip.h"

#define N 4096

static volatile int line_seen;
/* Code on the line after each marked call (its return address is there). */
#define STEP() (line_seen = __LINE__)

static void sleepy(void *arg) { usleep((useconds_t)(size_t)arg); }

static hipStream_t capture_stream;
static volatile int capture_phase;

static void *capturer(void *arg)
{
    (void)arg;
    hipStreamBeginCapture(capture_stream, hipStreamCaptureModeGlobal);
    capture_phase = 1;
    while (capture_phase != 2)
        usleep(1000);
    hipGraph_t g = NULL;
    hipStreamEndCapture(capture_stream, &g);
    if (g)
        hipGraphDestroy(g);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: lines <code>\n");
        return 2;
    }
    const char *m = argv[1];
    char *buf = malloc(2 * N);
    int on_stack[16];
    hipStream_t nb;
    hipStreamCreateWithFlags(&nb, hipStreamNonBlocking);

    if (!strcmp(m, "double-unregister")) {
        hipHostRegister(buf, N, 0); /* @reg */
        STEP();
        hipHostUnregister(buf); /* @unreg */
        STEP();
        hipHostUnregister(buf); /* @at */
        STEP();
    } else if (!strcmp(m, "unregister-unknown")) {
        hipHostUnregister(on_stack); /* @at */
        STEP();
    } else if (!strcmp(m, "unregister-interior")) {
        hipHostRegister(buf, N, 0); /* @reg */
        STEP();
        hipHostUnregister(buf + 64); /* @at */
        STEP();
        hipHostUnregister(buf);
    } else if (!strcmp(m, "overlapping-register")) {
        hipHostRegister(buf, N, 0); /* @reg */
        STEP();
        hipHostRegister(buf + 16, N, 0); /* @at */
        STEP();
        hipHostUnregister(buf);
    } else if (!strcmp(m, "nested-register")) {
        hipHostRegister(buf, N, 0); /* @reg */
        STEP();
        hipHostRegister(buf, N, 0); /* @at */
        STEP();
        hipHostUnregister(buf);
        hipHostUnregister(buf);
    } else if (!strcmp(m, "revived")) {
        hipHostRegister(buf, N, 0); /* @reg */
        STEP();
        hipHostUnregister(buf); /* @unreg */
        STEP();
        hipHostRegister(buf, N, 0); /* @at */
        STEP();
        hipHostUnregister(buf);
    } else if (!strcmp(m, "freed-while-registered")) {
        hipHostRegister(buf, N, 0); /* @reg */
        STEP();
        free(buf); /* @at @unreg */
        STEP();
        buf = NULL;
    } else if (!strcmp(m, "hipfree-host-pointer")) {
        hipHostRegister(buf, N, 0); /* @reg */
        STEP();
        hipFree(buf); /* @at */
        STEP();
        hipHostUnregister(buf);
    } else if (!strcmp(m, "leak-at-exit")) {
        hipHostRegister(buf, N, 0); /* @reg */
        STEP();
    } else if (!strcmp(m, "capture-deferred")) {
        hipStreamCreate(&capture_stream);
        hipHostRegister(buf, N, 0); /* @reg */
        STEP();
        pthread_t t;
        pthread_create(&t, NULL, capturer, NULL);
        while (!capture_phase)
            usleep(1000);
        hipHostUnregister(buf); /* @at @unreg */
        STEP();
        usleep(100000);
        capture_phase = 2;
        pthread_join(t, NULL);
    } else if (!strcmp(m, "release-timeout")) {
        hipHostRegister(buf, N, 0); /* @reg */
        STEP();
        simhipLaunchKernel(nb, sleepy, (void *)(size_t)1500000);
        hipHostUnregister(buf); /* @unreg */
        STEP();
    } else if (!strcmp(m, "runtime-error")) {
        hipHostRegister(buf, N, 0); /* @reg */
        STEP();
        hipError_t (*raw)(void *) = (hipError_t(*)(void *))simhipRawFunction("hipHostUnregister");
        if (raw)
            raw(buf);
        hipHostUnregister(buf); /* @at @unreg */
        STEP();
    } else if (!strcmp(m, "invalid-argument")) {
        hipHostUnregister(NULL); /* @at */
        STEP();
    } else if (!strcmp(m, "api-error")) {
        hipHostRegister(buf, N, 0xff00); /* @at */
        STEP();
    } else {
        fprintf(stderr, "lines: unknown mode %s\n", m);
        return 2;
    }
    printf("OK %d\n", line_seen);
    return 0;
}
