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

#include "legacy_cuda.h"

#define N ((2u << 20) / sizeof(int))
#define ROUNDS 300

static CUcontext ctx;
static CUstream s;
static int go, done;
static int *kbuf;

static void *capturer(void *arg)
{
    (void)arg;
    CHECK(cuCtxSetCurrent(ctx));
    unsigned seed = 1;
    for (int i = 1; i <= ROUNDS; i++) {
        int want;
        while ((want = __atomic_load_n(&go, __ATOMIC_ACQUIRE)) != i)
            if (want < 0)
                return NULL;
        int spin = rand_r(&seed) % 20000;
        for (volatile int k = 0; k < spin; k++)
            ;
        CHECK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
        usleep(3000);
        CUgraph g;
        CHECK(cuStreamEndCapture(s, &g));
        CHECK(cuGraphDestroy(g));
        __atomic_store_n(&done, i, __ATOMIC_RELEASE);
    }
    return NULL;
}

static void add_one(void *arg)
{
    (void)arg;
    usleep(2000);
    static int v[N];
    simcudaDeviceRead(v, kbuf, sizeof v);
    for (size_t i = 0; i < N; i++)
        v[i] += 1;
    simcudaDeviceWrite(kbuf, v, sizeof v);
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
        __atomic_store_n(&go, i, __ATOMIC_RELEASE);
        CHECK(cuMemHostUnregister(buf));
        if (!lc_verify("buf", buf, N, i)) {
            printf("round %d: the unregister returned before the kernel enqueued before it ran\n", i);
            bad = 1;
        }
        while (__atomic_load_n(&done, __ATOMIC_ACQUIRE) != i)
            ;
        CHECK(cuStreamSynchronize(s));
    }
    __atomic_store_n(&go, -1, __ATOMIC_RELEASE);
    pthread_join(t, NULL);
    CHECK(cuStreamDestroy_v2(s));
    free(buf);
    if (bad)
        return 1;
    printf("OK\n");
    return 0;
}
