/*
 * unreg_late_work - hipHostUnregister while a kernel still uses the range,
 * and another thread, once the call has begun, enqueues a host function
 * that waits for the unregister to return.
 *
 * The runtime's unregister waits for the device work enqueued before it
 * (the blocking stream's kernel), not for work enqueued while it waits: the
 * host function sees the call return and the program goes on. A release
 * that made the runtime's unregister later than the program's call would
 * wait for that host function too, which waits for the call: a deadlock
 * (here bounded: the host function gives up after 3 s and says so).
 */
#include "legacy.h"

#include <pthread.h>

#include "late_work.h"

#define N (256 * 1024) /* 1 MiB of ints */

static hipStream_t late;

/* Waits up to 3 s for the unregister to return. */
static void wait_return(hipStream_t st, hipError_t e, void *arg)
{
    (void)st;
    (void)e;
    (void)arg;
    late_wait_return();
}

static void *enqueue_late(void *arg)
{
    (void)arg;
    late_wait_for_the_call();
    CHECK(hipStreamAddCallback(late, wait_return, NULL, 0));
    CHECK(hipStreamSynchronize(late));
    return NULL;
}

int main(void)
{
    size_t bytes = N * sizeof(int);
    int *buf = aligned_alloc(4096, bytes);
    if (!buf)
        return 2;
    legacy_fill(buf, N, 0, 5);

    hipStream_t work;
    CHECK(hipStreamCreate(&work)); /* blocking: every runtime's unregister waits for it */
    CHECK(hipStreamCreateWithFlags(&late, hipStreamNonBlocking));
    CHECK(hipHostRegister(buf, bytes, hipHostRegisterMapped));
    int *dbuf;
    CHECK(hipHostGetDevicePointer((void **)&dbuf, buf, 0));

    static struct kargs args;
    args = (struct kargs){ .dev = dbuf, .n = N, .add = 3, .work_us = 400000 };
    CHECK(simhipLaunchKernel(work, add_kernel, &args));

    pthread_t t;
    if (pthread_create(&t, NULL, enqueue_late, NULL) != 0)
        return 2;
    __atomic_store_n(&late_began, 1, __ATOMIC_RELEASE);
    CHECK(hipHostUnregister(buf));
    __atomic_store_n(&late_returned, 1, __ATOMIC_RELEASE);
    pthread_join(t, NULL);

    CHECK(hipDeviceSynchronize());
    legacy_verify("buf", buf, N, 0, 5, 3);
    if (__atomic_load_n(&late_gave_up, __ATOMIC_ACQUIRE)) {
        printf("the host function enqueued after the unregister began waited 3 s for it to "
               "return\n");
        ++*legacy_failures();
    }
    CHECK(hipStreamDestroy(late));
    CHECK(hipStreamDestroy(work));
    free(buf);
    return legacy_finish();
}
