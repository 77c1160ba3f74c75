/*
 * cu_launch_stall - the worst time one thread's enqueue call takes while
 * another thread registers, uses and unregisters buffers, on a device kept
 * busy by a third (DESIGN section 3: the H200 stalled another thread's
 * launch 911 ms behind one cuMemHostUnregister).
 *
 *   - thread L: enqueues a short memset on its own stream in a loop and
 *     times every call (the figure);
 *   - thread W: `iters` times: registers a fresh 1 MiB buffer, copies it to
 *     the device on its stream, synchronizes that stream, unregisters it;
 *   - thread B: keeps a kernel of `busy_us` running on a third stream,
 *     back to back.
 * The bare driver's unregister waits for B's kernel holding the driver
 * lock, and L's next call waits behind it. Under safepin the unregister
 * waits (ordered) without the lock and the real one is held until the
 * device is idle or the memory is needed.
 *
 *   BENCH worst_ms=<max enqueue call> p99_ms=<p99> calls=<n> iters=<iters>
 */
#include <pthread.h>
#include <stdatomic.h>

#include "cu_bench.h"

#define MAX_CALLS 200000

static CUcontext ctx;
static atomic_int stop;
static int iters, busy_us;
static double lat[MAX_CALLS];
static size_t ncalls;

static void *launcher(void *arg)
{
    (void)arg;
    CHECK(cuCtxSetCurrent(ctx));
    CUstream s;
    CUdeviceptr d;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CHECK(cuMemAlloc_v2(&d, 256));
    while (!atomic_load(&stop) && ncalls < MAX_CALLS) {
        uint64_t t0 = now_ns();
        CHECK(cuMemsetD8Async(d, 1, 256, s));
        lat[ncalls++] = (double)(now_ns() - t0) / 1e6;
        if (ncalls % 64 == 0)
            CHECK(cuStreamSynchronize(s));
        sleep_us(200);
    }
    CHECK(cuStreamSynchronize(s));
    return NULL;
}

static void *busy(void *arg)
{
    (void)arg;
    CHECK(cuCtxSetCurrent(ctx));
    CUstream s;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    static struct cb_timed k[2];
    for (int i = 0; !atomic_load(&stop); i++) {
        k[i % 2] = (struct cb_timed){(unsigned)busy_us, 0};
        CHECK(simcudaLaunchKernel(s, cb_timed_fn, &k[i % 2]));
        CHECK(cuStreamSynchronize(s));
    }
    return NULL;
}

int main(int argc, char **argv)
{
    iters = arg_int(argc, argv, "iters", 40);
    busy_us = arg_int(argc, argv, "busy_us", 10000);
    const size_t size = 1 << 20;
    ctx = cb_init();
    CUstream s;
    CUdeviceptr d;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CHECK(cuMemAlloc_v2(&d, size));
    pthread_t l, b;
    pthread_create(&b, NULL, busy, NULL);
    pthread_create(&l, NULL, launcher, NULL);
    for (int i = 0; i < iters; i++) {
        char *buf = aligned_alloc(4096, size);
        if (!buf)
            return 2;
        memset(buf, i, size);
        CHECK(cuMemHostRegister_v2(buf, size, 0));
        CHECK(cuMemcpyHtoDAsync_v2(d, buf, size, s));
        CHECK(cuStreamSynchronize(s));
        CHECK(cuMemHostUnregister(buf));
        sleep_us(2000);
    }
    atomic_store(&stop, 1);
    pthread_join(l, NULL);
    pthread_join(b, NULL);
    double worst = 0;
    for (size_t i = 0; i < ncalls; i++)
        worst = lat[i] > worst ? lat[i] : worst;
    double p99 = percentile(lat, ncalls, 99);
    printf("BENCH worst_ms=%.3f p99_ms=%.4f calls=%zu iters=%d\n", worst, p99, ncalls, iters);
    return 0;
}
