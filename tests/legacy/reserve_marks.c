/*
 * reserve_marks - many threads unregister at once while safepin's own
 * allocations fail.
 *
 * T threads (argument, default 48) each register a 64 KiB buffer; once all
 * have, each enqueues a 100 ms kernel and a device-to-host copy into its
 * buffer on the null stream and unregisters it, all at the same moment,
 * then reads the buffer. An unregister returns after the work enqueued
 * before it (ROCm 5.2's waits for the null stream; safepin's ordered
 * unregister waits for every stream), so every buffer must hold the bytes
 * the device wrote. tests/fault/run.sh runs it with SAFEPIN_TEST_FAIL=alloc:N+
 * (safepin's allocations fail from the Nth on): each unregister then needs
 * one of safepin's reserve marker sets, fewer than the threads; none may
 * return before its work is done. Prints "registered R of T" and OK.
 */
#include <pthread.h>
#include "legacy.h"

#define N (16 * 1024) /* ints */
#define TMAX 64

static int nthreads = 48;
static pthread_barrier_t all_registered;
static int *dev[TMAX];
static struct kargs work[TMAX];
static int registered, stale;

static void *worker(void *arg)
{
    long id = (long)arg;
    int *buf = aligned_alloc(4096, N * sizeof(int));
    if (!buf)
        exit(2);
    memset(buf, 0, N * sizeof(int));
    int reg = hipHostRegister(buf, N * sizeof(int), 0) == hipSuccess;
    if (reg)
        __atomic_add_fetch(&registered, 1, __ATOMIC_RELAXED);
    pthread_barrier_wait(&all_registered);
    work[id] = (struct kargs){ .dev = dev[id], .n = N, .seed = (int)id, .work_us = 100000 };
    CHECK(simhipLaunchKernel(0, fill_kernel, &work[id]));
    CHECK(hipMemcpyAsync(buf, dev[id], N * sizeof(int), hipMemcpyDeviceToHost, 0));
    if (reg)
        CHECK(hipHostUnregister(buf));
    else
        CHECK(hipStreamSynchronize(0)); /* not registered: the copy's own wait */
    for (int i = 0; i < N; i++)
        if (buf[i] != pattern((size_t)i, (int)id)) {
            fprintf(stderr, "thread %ld: byte %d read before the device wrote it\n", id, i);
            __atomic_add_fetch(&stale, 1, __ATOMIC_RELAXED);
            break;
        }
    free(buf);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        nthreads = atoi(argv[1]);
    if (nthreads < 1 || nthreads > TMAX)
        return 2;
    for (int i = 0; i < nthreads; i++)
        CHECK(hipMalloc((void **)&dev[i], N * sizeof(int)));
    pthread_barrier_init(&all_registered, NULL, (unsigned)nthreads);
    pthread_t t[TMAX];
    for (long i = 0; i < nthreads; i++)
        if (pthread_create(&t[i], NULL, worker, (void *)i) != 0)
            return 2;
    for (int i = 0; i < nthreads; i++)
        pthread_join(t[i], NULL);
    printf("registered %d of %d\n", registered, nthreads);
    if (stale)
        (*legacy_failures())++;
    for (int i = 0; i < nthreads; i++)
        CHECK(hipFree(dev[i]));
    return legacy_finish();
}
