/*
 * unreg_stall.c - a persistent kernel on its own non-blocking stream waits
 * for a doorbell; meanwhile the host stages a batch through a registered
 * buffer on another stream and unregisters it once that stream is done.
 *
 * The program only waits for its own stream, as it should. But CUDA's
 * cuMemHostUnregister waits for the whole device: it cannot return while the
 * persistent kernel runs, and the kernel runs until the host rings the
 * doorbell after the unregister: a deadlock. A watchdog reports it after a
 * few seconds ("stalled: ...") and rings the doorbell itself.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "legacy_cuda.h"

#define N 4096
#define WATCHDOG_S 5

static int *doorbell;          /* cuMemHostAlloc: the kernel polls it */
static atomic_int unregistered, stalled;

static void persistent_kernel(void *arg)
{
    (void)arg;
    int v = 0;
    while (!v) {
        simcudaDeviceRead(&v, doorbell, sizeof v);
        usleep(500);
    }
}

static void *watchdog(void *arg)
{
    (void)arg;
    for (int i = 0; i < WATCHDOG_S * 100 && !atomic_load(&unregistered); i++)
        usleep(10000);
    if (!atomic_load(&unregistered)) {
        fprintf(stderr, "stalled: cuMemHostUnregister still blocked after %d s behind an "
                        "unrelated stream (the persistent kernel); ringing the doorbell\n",
                WATCHDOG_S);
        atomic_store(&stalled, 1);
        __atomic_store_n(doorbell, 1, __ATOMIC_RELEASE);
    }
    return NULL;
}

int main(void)
{
    lc_init();
    CUstream persistent, work;
    CHECK(cuStreamCreate(&persistent, CU_STREAM_NON_BLOCKING));
    CHECK(cuStreamCreate(&work, CU_STREAM_NON_BLOCKING));
    CHECK(cuMemHostAlloc((void **)&doorbell, sizeof(int), 0));
    *doorbell = 0;
    CHECK(simcudaLaunchKernel(persistent, persistent_kernel, NULL));

    static int staging[N];
    for (int i = 0; i < N; i++)
        staging[i] = lc_pattern((size_t)i, 3);
    CUdeviceptr d;
    CHECK(cuMemAlloc_v2(&d, sizeof staging));
    CHECK(cuMemHostRegister_v2(staging, sizeof staging, 0));
    CHECK(cuMemcpyHtoDAsync_v2(d, staging, sizeof staging, work));
    CHECK(cuStreamSynchronize(work));

    pthread_t wd;
    pthread_create(&wd, NULL, watchdog, NULL);
    CHECK(cuMemHostUnregister(staging));
    atomic_store(&unregistered, 1);
    pthread_join(wd, NULL);

    __atomic_store_n(doorbell, 1, __ATOMIC_RELEASE);
    CHECK(cuStreamSynchronize(persistent));
    CHECK(cuMemFree_v2(d));
    CHECK(cuMemFreeHost(doorbell));
    if (atomic_load(&stalled))
        return 1;
    printf("OK\n");
    return 0;
}
