/*
 * unreg_late_work.c - cuMemHostUnregister while a kernel still uses the
 * range, and another thread, once the call has begun, enqueues a host
 * function that waits for the unregister to return.
 *
 * The driver's unregister waits for the device work enqueued before it and
 * holds its lock meanwhile: the other thread's cuLaunchHostFunc waits until
 * the unregister returns, and its host function then sees the flag at
 * once. A release that made the driver's unregister later than the
 * program's call, with the host function already enqueued, would wait for
 * it too, and it waits for the call: a deadlock (here bounded: the host
 * function gives up after 3 s and says so).
 */
#include <pthread.h>
#include <unistd.h>

#include "legacy_cuda.h"
#include "late_work.h"

#define N (256 * 1024)

static CUstream late;
static CUcontext ctx;

static void wait_return(void *arg)
{
    (void)arg;
    late_wait_return();
}

static void *enqueue_late(void *arg)
{
    (void)arg;
    CHECK(cuCtxSetCurrent(ctx));
    late_wait_for_the_call();
    CHECK(cuLaunchHostFunc(late, wait_return, NULL));
    CHECK(cuStreamSynchronize(late));
    return NULL;
}

static int *kbuf;
static void add_kernel(void *arg)
{
    (void)arg;
    usleep(400000);
    static int v[N];
    lc_device_add(kbuf, v, N, 3);
}

int main(void)
{
    ctx = lc_init();
    size_t bytes = N * sizeof(int);
    int *buf = aligned_alloc(4096, bytes);
    if (!buf)
        return 2;
    for (int i = 0; i < N; i++)
        buf[i] = lc_pattern((size_t)i, 5) - 3;

    CUstream work;
    CHECK(cuStreamCreate(&work, CU_STREAM_NON_BLOCKING));
    CHECK(cuStreamCreate(&late, CU_STREAM_NON_BLOCKING));
    CHECK(cuMemHostRegister_v2(buf, bytes, 0));
    kbuf = buf;
    CHECK(simcudaLaunchKernel(work, add_kernel, NULL));

    pthread_t t;
    if (pthread_create(&t, NULL, enqueue_late, NULL) != 0)
        return 2;
    __atomic_store_n(&late_began, 1, __ATOMIC_RELEASE);
    CHECK(cuMemHostUnregister(buf));
    __atomic_store_n(&late_returned, 1, __ATOMIC_RELEASE);
    pthread_join(t, NULL);

    CHECK(cuCtxSynchronize());
    int bad = !lc_verify("buf", buf, N, 5);
    if (__atomic_load_n(&late_gave_up, __ATOMIC_ACQUIRE)) {
        printf("the host function enqueued after the unregister began waited 3 s for it to "
               "return\n");
        bad = 1;
    }
    CHECK(cuStreamDestroy_v2(late));
    CHECK(cuStreamDestroy_v2(work));
    free(buf);
    if (bad)
        return 1;
    printf("OK\n");
    return 0;
}
