/*
 * launch_stall.c - a server-style program: a persistent kernel on its own
 * non-blocking stream waits for a doorbell; a worker thread stages a batch
 * through a registered buffer on its own stream and unregisters it once
 * that stream is done; the main thread keeps launching short work on a
 * third stream.
 *
 * Every thread waits only for its own stream, as it should. But CUDA's
 * cuMemHostUnregister waits for the whole device *holding the driver
 * lock*: the main thread's next launch blocks behind it until the
 * persistent kernel ends (911 ms on the H200). The program reports
 * "stalled: ..." when it sees its launch waiting on the driver lock held by
 * the unregister (simcudaDriverLockState, no timing involved), then rings
 * the doorbell itself so that everything finishes.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "legacy_cuda.h"

#define N 4096

static int *doorbell;
static atomic_int in_unregister, unregistered, launched;
static CUcontext ctx;
static CUstream s_main;
static CUdeviceptr d_main;

static void persistent_kernel(void *arg)
{
    (void)arg;
    int v = 0;
    while (!v) {
        simcudaDeviceRead(&v, doorbell, sizeof v);
        usleep(500);
    }
}

static void *worker(void *arg)
{
    (void)arg;
    CHECK(cuCtxSetCurrent(ctx));
    static int staging[N];
    for (int i = 0; i < N; i++)
        staging[i] = lc_pattern((size_t)i, 5);
    CUstream s;
    CUdeviceptr d;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CHECK(cuMemAlloc_v2(&d, sizeof staging));
    CHECK(cuMemHostRegister_v2(staging, sizeof staging, 0));
    CHECK(cuMemcpyHtoDAsync_v2(d, staging, sizeof staging, s));
    CHECK(cuStreamSynchronize(s));
    atomic_store(&in_unregister, 1);
    CHECK(cuMemHostUnregister(staging));
    atomic_store(&unregistered, 1);
    CHECK(cuStreamDestroy_v2(s));
    return NULL;
}

static void *launcher(void *arg)
{
    (void)arg;
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuMemsetD8Async(d_main, 7, 64, s_main));
    atomic_store(&launched, 1);
    return NULL;
}

static void ring(void) { __atomic_store_n(doorbell, 1, __ATOMIC_RELEASE); }

int main(void)
{
    ctx = lc_init();
    CUstream s_persist;
    CHECK(cuStreamCreate(&s_persist, CU_STREAM_NON_BLOCKING));
    CHECK(cuStreamCreate(&s_main, CU_STREAM_NON_BLOCKING));
    CHECK(cuMemAlloc_v2(&d_main, 64));
    CHECK(cuMemHostAlloc((void **)&doorbell, sizeof(int), 0));
    *doorbell = 0;
    CHECK(simcudaLaunchKernel(s_persist, persistent_kernel, NULL));

    pthread_t w, l;
    pthread_create(&w, NULL, worker, NULL);
    while (!atomic_load(&in_unregister))
        usleep(1000);
    /* Give the unregister its chance to take the driver lock (bare, it does
     * at once; it never does while a kernel runs under safepin). */
    int held = 0, waiting = 0;
    for (int i = 0; i < 1000 && !held && !atomic_load(&unregistered); i++) {
        simcudaDriverLockState(&held, &waiting);
        usleep(1000);
    }
    pthread_create(&l, NULL, launcher, NULL);
    int stalled = 0;
    for (int i = 0; i < 3000 && !atomic_load(&launched); i++) {
        simcudaDriverLockState(&held, &waiting);
        if (held == 1 && waiting > 0) {
            stalled = 1;
            break;
        }
        usleep(1000);
    }
    if (stalled)
        fprintf(stderr, "stalled: a launch on the main thread waits for the driver lock held by "
                        "another thread's cuMemHostUnregister (behind an unrelated kernel); "
                        "ringing the doorbell\n");
    else if (!atomic_load(&launched))
        fprintf(stderr, "the launch did not return within 3 s\n");
    ring();
    pthread_join(l, NULL);
    pthread_join(w, NULL);
    CHECK(cuStreamSynchronize(s_persist));
    CHECK(cuStreamSynchronize(s_main));
    CHECK(cuMemFree_v2(d_main));
    CHECK(cuMemFreeHost(doorbell));
    if (stalled || !atomic_load(&launched))
        return 1;
    printf("OK\n");
    return 0;
}
