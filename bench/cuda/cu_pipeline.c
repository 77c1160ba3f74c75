/*
 * cu_pipeline - the CUDA mirror of bench/pipeline.c and of gpu-bench's
 * pipeline row (tests/gpu/gpubench.c): 4 streams; malloc, fill, register,
 * copy, kernel, unregister, free.
 *
 * Iteration i (of `iters`) uses stream i % 4 (created with flags 0, as
 * gpu-bench does): malloc a 1 MiB buffer, fill it, cuMemHostRegister it,
 * copy it to that stream's device buffer, a kernel of `op_us` microseconds
 * that touches nothing else, cuMemHostUnregister it, free it. The bare
 * driver waits for the whole device in every unregister, so the streams
 * never overlap; under safepin the unregister returns at once (async) or
 * once the work enqueued before it is done (ordered), and the free is
 * deferred until the release. The figure is the wall time from the first
 * malloc until all device work has completed (cuCtxSynchronize) AND the
 * driver itself no longer holds any of the buffers registered (its own
 * cuMemHostGetFlags, found past every preload: tests/gpu/real_driver.h),
 * in milliseconds: safepin's background work is inside the figure.
 *
 *   BENCH wall_ms=<ms> iters=<n> loop_ms=<the loop> sync_ms=<device work after
 *         it> gone_ms=<then until every buffer is really unregistered>
 */
#include "cu_bench.h"
#include "../../tests/gpu/real_driver.h"

#define NSTREAMS 4

/* Wait until the driver no longer holds p registered; 0 or -1 (timeout). */
static int wait_gone(void *p, double timeout_s)
{
    uint64_t deadline = now_ns() + (uint64_t)(timeout_s * 1e9);
    int r;
    while ((r = real_registered(p)) != 0) {
        if (r < 0 || now_ns() > deadline)
            return -1;
        sleep_us(5);
    }
    return 0;
}

int main(int argc, char **argv)
{
    int iters = arg_int(argc, argv, "iters", 200);
    int op_us = arg_int(argc, argv, "op_us", 500);
    const size_t size = 1 << 20;
    if (iters < 1)
        iters = 1;
    cb_init();
    rd_save_context();
    CUstream st[NSTREAMS];
    CUdeviceptr dev[NSTREAMS];
    for (int i = 0; i < NSTREAMS; i++) {
        CHECK(cuStreamCreate(&st[i], 0));
        CHECK(cuMemAlloc_v2(&dev[i], size));
    }
    struct cb_timed *k = calloc((size_t)iters, sizeof *k);
    char **addr = calloc((size_t)iters, sizeof *addr);
    if (!k || !addr)
        return 2;
    CHECK(cuCtxSynchronize());

    uint64_t t0 = now_ns();
    for (int i = 0; i < iters; i++) {
        CUstream s = st[i % NSTREAMS];
        char *buf = malloc(size);
        if (!buf)
            return 2;
        memset(buf, i & 0xff, size);
        CHECK(cuMemHostRegister_v2(buf, size, 0));
        CHECK(cuMemcpyHtoDAsync_v2(dev[i % NSTREAMS], buf, size, s));
        k[i] = (struct cb_timed){ (unsigned)op_us, 0 };
        CHECK(simcudaLaunchKernel(s, cb_timed_fn, &k[i]));
        CHECK(cuMemHostUnregister(buf));
        addr[i] = buf;
        free(buf);
    }
    uint64_t t_loop = now_ns();
    CHECK(cuCtxSynchronize());
    uint64_t t_sync = now_ns();
    for (int i = 0; i < iters; i++) /* freed: only the driver's own table is asked */
        if (wait_gone(addr[i], 30.0) != 0) {
            fprintf(stderr, "cu_pipeline: buffer %d still registered after 30 s\n", i);
            return 1;
        }
    uint64_t t1 = now_ns();
    for (int i = 0; i < iters; i++)
        if (!k[i].started) {
            fprintf(stderr, "cu_pipeline: kernel %d did not run\n", i);
            return 1;
        }
    /* Also: the loop alone, and the device work and releases after it. */
    printf("BENCH wall_ms=%.3f iters=%d loop_ms=%.3f sync_ms=%.3f gone_ms=%.3f\n",
           (double)(t1 - t0) / 1e6, iters, (double)(t_loop - t0) / 1e6,
           (double)(t_sync - t_loop) / 1e6, (double)(t1 - t_sync) / 1e6);
    fflush(stdout);
    return 0;
}
