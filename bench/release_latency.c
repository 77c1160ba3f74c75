/*
 * release_latency - from the completion of the last device operation that
 * used a range to the real unregister of that range having run.
 *
 * Each sample: register a 64 KiB buffer; launch on a non-blocking stream a
 * kernel that reads the buffer through the device, runs `kernel_us` (1000)
 * microseconds and, as its last instruction, records CLOCK_MONOTONIC
 * (t_done); call hipHostUnregister at once (the kernel is still running);
 * then poll, a few microseconds apart, hipHostGetDevicePointer(buffer) -
 * a call safepin does not hook, answered by simhip's own table - until it
 * fails: that is when the real hipHostUnregister has removed the range
 * (t_gone). The sample is t_gone - t_done. Natively the unregister call
 * itself waits and unregisters, and the first poll already fails; under
 * safepin the call returns at once and the reaper does the real unregister
 * after its markers complete. The same detection is used in both cases.
 * 10 warm-up samples, then `samples=K` (300); p50 and p99 in microseconds.
 *
 *   BENCH p50_us=<p50> p90_us=<p90> p99_us=<p99> max_us=<max> samples=<K>
 */
#include "bench.h"

int main(int argc, char **argv)
{
    int samples = arg_int(argc, argv, "samples", 300);
    int kernel_us = arg_int(argc, argv, "kernel_us", 1000);
    const int warm = 10;
    if (samples < 10)
        samples = 10;
    const size_t size = 64 * 1024;
    char *buf = aligned_alloc(4096, size);
    if (!buf)
        return 2;
    memset(buf, 3, size);
    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    double *v = calloc((size_t)samples, sizeof *v);
    if (!v)
        return 2;

    for (int i = 0; i < warm + samples; i++) {
        CHECK(hipHostRegister(buf, size, 0));
        static struct timed_kernel k;
        k = (struct timed_kernel){ .dev = buf, .us = (unsigned)kernel_us };
        CHECK(simhipLaunchKernel(s, timed_kernel_fn, &k));
        CHECK(hipHostUnregister(buf));
        uint64_t gone = wait_really_unregistered(buf, 10.0);
        uint64_t done = __atomic_load_n(&k.done_ns, __ATOMIC_ACQUIRE);
        if (!done) {
            fprintf(stderr, "release_latency: the range was really unregistered before its "
                            "kernel completed (early release)\n");
            return 1;
        }
        if (i >= warm)
            v[i - warm] = (double)(gone - done) / 1e3;
        CHECK(hipStreamSynchronize(s));
    }
    double mx = percentile(v, (size_t)samples, 100);
    printf("BENCH p50_us=%.2f p90_us=%.2f p99_us=%.2f max_us=%.2f samples=%d\n",
           percentile(v, (size_t)samples, 50), percentile(v, (size_t)samples, 90),
           percentile(v, (size_t)samples, 99), mx, samples);
    fflush(stdout);
    CHECK(hipStreamDestroy(s));
    free(buf);
    return 0;
}
