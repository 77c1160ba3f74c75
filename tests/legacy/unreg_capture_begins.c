/*
 * unreg_capture_begins - hipHostUnregister of a 2 MiB range while a kernel
 * on a non-blocking stream still uses it, and another thread begins a
 * thread-local capture on that stream at about the same moment.
 *
 * The runtime's unregister (ROCm 5.6+) waits for the kernel, enqueued
 * before the call, whatever the stream does next: the program reads the
 * kernel's bytes after the call. An unregister that asked the streams
 * whether the device is idle and skipped a stream because it had begun
 * capturing meanwhile would return before the kernel ran (the range is big
 * enough to keep a revive grace, so nothing else waits): stale bytes.
 *
 * The capture begins at a random moment around the call, so each round
 * hits a different point of it; a few hundred rounds hit every window.
 */
#include "legacy.h"

#include <pthread.h>

#include "capture_rounds.h"

#define NB (2u << 20)
#define N (NB / sizeof(int))
#define ROUNDS 400

static hipStream_t s;

static void *capturer(void *arg)
{
    (void)arg;
    unsigned seed = 1;
    for (int i = 1; i <= ROUNDS && cr_wait_start(i, &seed); i++) {
        CHECK(hipStreamBeginCapture(s, hipStreamCaptureModeThreadLocal));
        usleep(3000);
        hipGraph_t g;
        CHECK(hipStreamEndCapture(s, &g));
        CHECK(hipGraphDestroy(g));
        cr_end(i);
    }
    return NULL;
}

int main(void)
{
    int *buf = aligned_alloc(4096, NB);
    if (!buf)
        exit(2);
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    pthread_t t;
    if (pthread_create(&t, NULL, capturer, NULL) != 0)
        exit(2);
    static struct kargs args;
    for (int i = 1; i <= ROUNDS && *legacy_failures() == 0; i++) {
        legacy_fill(buf, N, 0, i);
        CHECK(hipHostRegister(buf, NB, 0));
        args = (struct kargs){ .dev = buf, .n = N, .add = 1, .work_us = 2000 };
        CHECK(simhipLaunchKernel(s, add_kernel, &args));
        cr_start(i);
        CHECK(hipHostUnregister(buf));
        char what[32];
        snprintf(what, sizeof(what), "round %d", i);
        legacy_verify(what, buf, N, 0, i, 1);
        cr_wait_done(i);
        CHECK(hipStreamSynchronize(s));
    }
    cr_start(-1);
    pthread_join(t, NULL);
    CHECK(hipStreamDestroy(s));
    free(buf);
    return legacy_finish();
}
