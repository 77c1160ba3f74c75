/*
 * pipeline - a legacy-style program: 4 streams, many iterations of
 * malloc, fill, register, operation, unregister, free.
 *
 * Iteration i (of `iters`, 400) uses stream i % 4 (created with
 * hipStreamCreate, as legacy code does): malloc a 1 MiB buffer, fill it,
 * hipHostRegister it, enqueue hipMemcpyAsync of it to that stream's device
 * buffer and a kernel that reads it and runs `op_us` (500) microseconds (the
 * "GPU work"), hipHostUnregister it, free it. Natively (simhip `current`,
 * ROCm 6.2+) each unregister synchronizes every stream, so the 4 streams
 * never overlap; under safepin the unregister returns at once and the free
 * is deferred until the release. The figure is the wall time from the first
 * malloc to the moment all device work has completed
 * (hipDeviceSynchronize) AND every buffer is really unregistered (polled
 * through hipHostGetDevicePointer, which safepin does not hook), in
 * milliseconds: safepin's background work is inside the figure.
 *
 *   BENCH wall_ms=<ms> iters=<n>
 */
#include "bench.h"

#define NSTREAMS 4

int main(int argc, char **argv)
{
    int iters = arg_int(argc, argv, "iters", 400);
    int op_us = arg_int(argc, argv, "op_us", 500);
    const size_t size = 1 << 20;
    if (iters < 1)
        iters = 1;
    hipStream_t st[NSTREAMS];
    void *dev[NSTREAMS];
    for (int i = 0; i < NSTREAMS; i++) {
        CHECK(hipStreamCreate(&st[i]));
        CHECK(hipMalloc(&dev[i], size));
    }
    struct timed_kernel *k = calloc((size_t)iters, sizeof *k);
    char **addr = calloc((size_t)iters, sizeof *addr);
    if (!k || !addr)
        return 2;
    CHECK(hipDeviceSynchronize());

    uint64_t t0 = now_ns();
    for (int i = 0; i < iters; i++) {
        hipStream_t s = st[i % NSTREAMS];
        char *buf = malloc(size);
        if (!buf)
            return 2;
        memset(buf, i & 0xff, size);
        CHECK(hipHostRegister(buf, size, 0));
        CHECK(hipMemcpyAsync(dev[i % NSTREAMS], buf, size, hipMemcpyHostToDevice, s));
        k[i] = (struct timed_kernel){ .dev = buf + size - 1, .us = (unsigned)op_us };
        CHECK(simhipLaunchKernel(s, timed_kernel_fn, &k[i]));
        CHECK(hipHostUnregister(buf));
        addr[i] = buf;
        free(buf);
    }
    CHECK(hipDeviceSynchronize());
    for (int i = 0; i < iters; i++)
        wait_really_unregistered(addr[i], 30.0);
    uint64_t t1 = now_ns();
    for (int i = 0; i < iters; i++)
        if (!k[i].done_ns) {
            fprintf(stderr, "pipeline: kernel %d did not run\n", i);
            return 1;
        }

    printf("BENCH wall_ms=%.3f iters=%d\n", (double)(t1 - t0) / 1e6, iters);
    fflush(stdout);
    for (int i = 0; i < NSTREAMS; i++) {
        CHECK(hipFree(dev[i]));
        CHECK(hipStreamDestroy(st[i]));
    }
    return 0;
}
