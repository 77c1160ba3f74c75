/*
 * unregister_call - how long the hipHostUnregister call itself takes while
 * a 100 ms operation runs on an unrelated non-blocking stream.
 *
 * A 1 MiB buffer is registered and used by a synchronous copy on the null
 * stream (so it really was used by the device, and that use is finished).
 * Then a 100 ms kernel (touching nothing of the buffer) is launched on a
 * non-blocking stream; once it has started, hipHostUnregister(buffer) is
 * timed. Natively (simhip's `current` personality, ROCm 6.2+) the call
 * synchronizes every stream, so it waits for the kernel; under safepin it
 * records a release and returns. Before the next sample the program waits
 * for the kernel and for the real unregister (untimed). One untimed
 * warm-up register/unregister on the idle device comes first (one-time
 * costs: safepin starts its reaper thread there). `samples=K` (3) samples;
 * the figure is their median, in microseconds.
 *
 * kernel_us=0: no kernel at all, the device is idle (the prior work, the
 * copy, is done): the cost of the call itself.
 *
 *   BENCH call_us=<median> min_us=<min> max_us=<max> samples=<K>
 */
#include "bench.h"

int main(int argc, char **argv)
{
    int samples = arg_int(argc, argv, "samples", 3);
    int kernel_us = arg_int(argc, argv, "kernel_us", 100000);
    if (samples < 1 || samples > 64)
        samples = 3;
    const size_t size = 1 << 20;
    char *buf = aligned_alloc(4096, size);
    void *dev;
    if (!buf)
        return 2;
    memset(buf, 7, size);
    hipStream_t busy;
    CHECK(hipStreamCreateWithFlags(&busy, hipStreamNonBlocking));
    CHECK(hipMalloc(&dev, size));

    /* Warm-up (untimed, device idle): one-time costs such as starting
     * safepin's reaper thread are paid here, not in the first sample. */
    CHECK(hipHostRegister(buf, size, 0));
    CHECK(hipHostUnregister(buf));
    wait_really_unregistered(buf, 10.0);

    double v[64];
    for (int i = 0; i < samples; i++) {
        CHECK(hipHostRegister(buf, size, 0));
        CHECK(hipMemcpyAsync(dev, buf, size, hipMemcpyHostToDevice, 0));
        CHECK(hipStreamSynchronize(0));

        static struct timed_kernel k;
        if (kernel_us > 0) {
            k = (struct timed_kernel){ .dev = NULL, .us = (unsigned)kernel_us };
            CHECK(simhipLaunchKernel(busy, timed_kernel_fn, &k));
            while (!k.started)
                sleep_us(100);
            sleep_us(1000); /* well inside the kernel */
        }

        uint64_t t0 = now_ns();
        hipError_t e = hipHostUnregister(buf);
        uint64_t t1 = now_ns();
        if (e != hipSuccess) {
            fprintf(stderr, "hipHostUnregister: %d\n", (int)e);
            return 1;
        }
        v[i] = (double)(t1 - t0) / 1e3;

        CHECK(hipStreamSynchronize(busy));
        wait_really_unregistered(buf, 10.0);
    }
    double mn = v[0], mx = v[0];
    for (int i = 1; i < samples; i++) {
        mn = v[i] < mn ? v[i] : mn;
        mx = v[i] > mx ? v[i] : mx;
    }
    printf("BENCH call_us=%.3f min_us=%.3f max_us=%.3f samples=%d\n", median(v, (size_t)samples),
           mn, mx, samples);
    fflush(stdout);
    CHECK(hipFree(dev));
    CHECK(hipStreamDestroy(busy));
    free(buf);
    return 0;
}
