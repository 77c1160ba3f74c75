/*
 * unreg_capture_begins.c - cuMemHostUnregister of a 2 MiB range while a
 * kernel on a non-blocking stream still uses it, and another thread begins
 * a thread-local capture on that stream at about the same moment.
 *
 * The driver's unregister waits for the kernel, enqueued before the call,
 * whatever the stream does next: the program reads the kernel's bytes after
 * the call. An unregister that asked the streams whether the device is idle
 * and skipped a stream because it had begun capturing meanwhile would
 * return before the kernel ran (an idle-looking device keeps the range in
 * its revive grace, so nothing else waits): stale bytes.
 *
 * The capture begins at a random moment around the call; a few hundred
 * rounds hit every window of it.
 */
#include <pthread.h>
#include <unistd.h>

#include "capture_rounds.h"
#include "legacy_cuda.h"

#define N ((2u << 20) / sizeof(int))
#define ROUNDS 300

static CUcontext ctx;
static CUstream s;
static int *kbuf;

static void *capturer(void *arg)
{
    (void)arg;
    CHECK(cuCtxSetCurrent(ctx));
    unsigned seed = 1;
    for (int i = 1; i <= ROUNDS && cr_wait_start(i, &seed); i++) {
        CHECK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
        usleep(3000);
        CUgraph g;
        CHECK(cuStreamEndCapture(s, &g));
        CHECK(cuGraphDestroy(g));
        cr_end(i);
    }
    return NULL;
}

static void add_one(void *arg)
{
    (void)arg;
    usleep(2000);
    static int v[N];
    lc_device_add(kbuf, v, N, 1);
}

int main(void)
{
    ctx = lc_init();
    int *buf = aligned_alloc(4096, N * sizeof(int));
    if (!buf)
        return 2;
    kbuf = buf;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    pthread_t t;
    if (pthread_create(&t, NULL, capturer, NULL) != 0)
        return 2;
    int bad = 0;
    for (int i = 1; i <= ROUNDS && !bad; i++) {
        for (size_t j = 0; j < N; j++)
            buf[j] = lc_pattern(j, i) - 1;
        CHECK(cuMemHostRegister_v2(buf, N * sizeof(int), 0));
        CHECK(simcudaLaunchKernel(s, add_one, NULL));
        cr_start(i);
        CHECK(cuMemHostUnregister(buf));
        if (!lc_verify("buf", buf, N, i)) {
            printf("round %d: the unregister returned before the kernel enqueued before it ran\n", i);
            bad = 1;
        }
        cr_wait_done(i);
        CHECK(cuStreamSynchronize(s));
    }
    cr_start(-1);
    pthread_join(t, NULL);
    CHECK(cuStreamDestroy_v2(s));
    free(buf);
    if (bad)
        return 1;
    printf("OK\n");
    return 0;
}
