/*
 * cancel_in_wait - a worker thread is cancelled while it registers memory.
 *
 * The host unpins a buffer that a long kernel on the null stream still
 * uses, then hands its first half to a worker thread, which pins it again
 * and waits to be cancelled (a pool shutting down). The host cancels the
 * worker a moment later, joins it, and goes on using the runtime: it
 * unregisters the worker's half, verifies the kernel's data and exits.
 *
 * Without safepin the unregister waited for the kernel, so the worker's
 * register returns at once and the worker dies in sleep(). With safepin and
 * unregister=async (tests/diag/lifetime.sh) the unregister returns at once
 * and the overlapping register waits for the release: the cancellation
 * arrives during that wait. It must not end the thread with safepin's lock
 * held or its state half-done (every later call, the exit drain included,
 * would hang): the register completes, and the thread is cancelled at its
 * next cancellation point, as without safepin. Under the default (ordered)
 * unregister it runs as without safepin.
 */
#include <pthread.h>

#include "legacy.h"

#define N (64 * 1024) /* 256 KiB of ints */

static int *buf;
static volatile int registered = -1;

static void *worker(void *arg)
{
    (void)arg;
    registered = hipHostRegister(buf, N / 2 * sizeof(int), 0);
    for (;;)
        sleep(1); /* a cancellation point: the worker ends here */
    return NULL;
}

int main(void)
{
    size_t bytes = N * sizeof(int);
    buf = aligned_alloc(4096, bytes);
    if (!buf)
        return 2;
    legacy_fill(buf, N, 0, 5);
    CHECK(hipHostRegister(buf, bytes, hipHostRegisterMapped));
    int *dbuf;
    CHECK(hipHostGetDevicePointer((void **)&dbuf, buf, 0));

    static struct kargs args;
    args = (struct kargs){ .dev = dbuf, .n = N, .add = 3, .work_us = 400000 };
    CHECK(simhipLaunchKernel(0, add_kernel, &args));
    CHECK(hipHostUnregister(buf)); /* the null stream's kernel still runs */

    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0)
        return 2;
    usleep(100000); /* the worker is inside hipHostRegister by now */
    pthread_cancel(t);
    void *res;
    pthread_join(t, &res);
    if (res != PTHREAD_CANCELED) {
        fprintf(stderr, "the worker was not cancelled\n");
        return 1;
    }
    if (registered != hipSuccess) {
        fprintf(stderr, "the worker's hipHostRegister returned %d, expected 0\n", registered);
        return 1;
    }
    CHECK(hipDeviceSynchronize());
    legacy_verify("buf", buf, N, 0, 5, 3);
    CHECK(hipHostUnregister(buf)); /* the worker's registration */
    free(buf);
    return legacy_finish();
}
