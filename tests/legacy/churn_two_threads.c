/*
 * churn_two_threads - two threads each pin, use and unpin one shared buffer,
 * 3000 times.
 *
 * Each thread owns half of a shared buffer and, per item, registers the
 * whole buffer, runs a kernel that writes its half on its own stream, waits,
 * checks its half and unregisters. The runtime does not count
 * registrations: one thread's unregister unpins the buffer under the other
 * one's kernel (GPU fault), or the other thread's unregister fails
 * (hipErrorHostMemoryNotRegistered), or both unregisters race inside the
 * runtime (abort).
 */
#include <pthread.h>
#include "legacy.h"

#define ITERS 3000
#define N 4096 /* 16 KiB of ints, half per thread */

static int *buf;

static void *worker(void *arg)
{
    int tid = (int)(long)arg;
    size_t first = (size_t)tid * (N / 2);
    struct kargs args;
    hipStream_t stream;
    CHECK(hipStreamCreate(&stream));

    for (int i = 0; i < ITERS; i++) {
        int seed = i * 2 + tid;
        int *dbuf;
        CHECK(hipHostRegister(buf, N * sizeof(int), hipHostRegisterMapped));
        CHECK(hipHostGetDevicePointer((void **)&dbuf, buf, 0));
        args = (struct kargs){ .dev = dbuf + first, .n = N / 2, .first = first,
                               .seed = seed };
        CHECK(simhipLaunchKernel(stream, fill_kernel, &args));
        CHECK(hipStreamSynchronize(stream));
        if (!legacy_verify(tid ? "thread 1" : "thread 0", buf + first, N / 2, first,
                           seed, 0))
            exit(1);
        CHECK(hipHostUnregister(buf));
    }
    CHECK(hipStreamDestroy(stream));
    return NULL;
}

int main(void)
{
    buf = aligned_alloc(4096, N * sizeof(int));
    if (!buf)
        return 2;
    memset(buf, 0, N * sizeof(int));

    pthread_t t[2];
    for (long i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);

    free(buf);
    return legacy_finish();
}
