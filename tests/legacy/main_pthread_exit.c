/*
 * main_pthread_exit - main ends with pthread_exit; a worker finishes the job.
 *
 * main sets up, starts a worker and leaves with pthread_exit(), as servers
 * and some test drivers do. The process then ends when its last thread
 * ends. The worker pins buffers, runs kernels on its own stream, unpins,
 * verifies, prints OK and returns. It keeps one buffer registered to the
 * end (a leak the end-of-run report names).
 *
 * No thread the program did not make may keep the process alive: without
 * safepin it exits 0 as soon as the worker returns. With safepin it must
 * too, and the exit drain and report still run (leak-at-exit is printed).
 */
#include <pthread.h>

#include "legacy.h"

#define N (64 * 1024) /* 256 KiB of ints */

static int *kept; /* registered to the end: the leak */

static void *worker(void *arg)
{
    (void)arg;
    size_t bytes = N * sizeof(int);
    int *buf = aligned_alloc(4096, bytes);
    if (!buf)
        exit(2);
    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    for (int round = 0; round < 3; round++) {
        legacy_fill(buf, N, 0, round);
        CHECK(hipHostRegister(buf, bytes, hipHostRegisterMapped));
        int *dbuf;
        CHECK(hipHostGetDevicePointer((void **)&dbuf, buf, 0));
        struct kargs args = { .dev = dbuf, .n = N, .add = 1, .work_us = 20000 };
        CHECK(simhipLaunchKernel(s, add_kernel, &args));
        CHECK(hipStreamSynchronize(s));
        CHECK(hipHostUnregister(buf));
        legacy_verify("buf", buf, N, 0, round, 1);
    }
    CHECK(hipStreamDestroy(s));
    free(buf);
    CHECK(hipHostRegister(kept, bytes, 0));
    legacy_finish();
    return NULL;
}

int main(void)
{
    kept = aligned_alloc(4096, N * sizeof(int));
    if (!kept)
        return 2;
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0)
        return 2;
    pthread_detach(t);
    pthread_exit(NULL);
}
