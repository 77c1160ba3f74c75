/*
 * double_unregister - a buffer unpinned twice: once in sequence, then by two
 * threads at the same time.
 *
 * Cleanup code that runs twice: first in order (the second call must answer
 * hipErrorHostMemoryNotRegistered), then from two threads that each think
 * they own the buffer's teardown. The runtime's two unregisters race on one
 * object and abort ("Memobj map does not have ptr"). Exactly one of the two
 * must succeed, the other must get hipErrorHostMemoryNotRegistered, and the
 * buffer must still work when pinned again.
 */
#include <pthread.h>
#include "legacy.h"

#define N (16 * 1024)
#define ROUNDS 200

static int *buf;
static pthread_barrier_t barrier;
static hipError_t results[2];

static void *teardown(void *arg)
{
    int tid = (int)(long)arg;
    pthread_barrier_wait(&barrier);
    results[tid] = hipHostUnregister(buf);
    return NULL;
}

static void use_buffer(hipStream_t stream, int seed, unsigned work_us)
{
    static struct kargs args;
    int *dbuf;
    CHECK(hipHostGetDevicePointer((void **)&dbuf, buf, 0));
    args = (struct kargs){ .dev = dbuf, .n = N, .seed = seed, .work_us = work_us };
    CHECK(simhipLaunchKernel(stream, fill_kernel, &args));
}

int main(void)
{
    buf = aligned_alloc(4096, N * sizeof(int));
    if (!buf)
        return 2;

    /* In sequence, with the kernel still running on the null stream. */
    CHECK(hipHostRegister(buf, N * sizeof(int), hipHostRegisterMapped));
    use_buffer(0, 1, 20000);
    CHECK(hipHostUnregister(buf));
    EXPECT_ERR(hipHostUnregister(buf), hipErrorHostMemoryNotRegistered);
    CHECK(hipDeviceSynchronize());
    legacy_verify("buf (sequential)", buf, N, 0, 1, 0);

    /* From two threads at once. */
    pthread_barrier_init(&barrier, NULL, 2);
    for (int r = 0; r < ROUNDS && !*legacy_failures(); r++) {
        CHECK(hipHostRegister(buf, N * sizeof(int), hipHostRegisterMapped));
        use_buffer(0, 100 + r, 0);
        CHECK(hipDeviceSynchronize());
        legacy_verify("buf (concurrent)", buf, N, 0, 100 + r, 0);

        pthread_t t[2];
        for (long i = 0; i < 2; i++)
            pthread_create(&t[i], NULL, teardown, (void *)i);
        for (int i = 0; i < 2; i++)
            pthread_join(t[i], NULL);
        int ok = (results[0] == hipSuccess) + (results[1] == hipSuccess);
        int nreg = (results[0] == hipErrorHostMemoryNotRegistered) +
                   (results[1] == hipErrorHostMemoryNotRegistered);
        if (ok != 1 || nreg != 1) {
            fprintf(stderr,
                    "round %d: concurrent unregisters returned %s (%d) and %s (%d); "
                    "want one hipSuccess and one hipErrorHostMemoryNotRegistered\n",
                    r, hipGetErrorName(results[0]), (int)results[0],
                    hipGetErrorName(results[1]), (int)results[1]);
            (*legacy_failures())++;
        }
    }

    /* The buffer still works. */
    CHECK(hipHostRegister(buf, N * sizeof(int), hipHostRegisterMapped));
    use_buffer(0, 7, 0);
    CHECK(hipDeviceSynchronize());
    legacy_verify("buf (after)", buf, N, 0, 7, 0);
    CHECK(hipHostUnregister(buf));
    free(buf);
    return legacy_finish();
}
