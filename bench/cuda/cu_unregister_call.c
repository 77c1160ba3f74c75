/*
 * cu_unregister_call - how long cuMemHostUnregister itself takes while an
 * operation of kernel_us runs on an unrelated non-blocking stream (the CUDA
 * mirror of bench/unregister_call.c).
 *
 * A fresh 1 MiB buffer per sample is registered and used by a copy on its
 * own stream (synchronized: that use is done); then a kernel of kernel_us
 * touching nothing of it starts on another stream, and the unregister is
 * timed. The bare driver waits for the whole device (the kernel); safepin
 * returns once the work enqueued before the call is done (ordered: the
 * kernel too, but without the driver lock) or at once (async).
 * kernel_us=0: the device is idle.
 *
 *   BENCH call_us=<median> max_us=<max> samples=<K>
 */
#include "cu_bench.h"

int main(int argc, char **argv)
{
    int samples = arg_int(argc, argv, "samples", 3);
    int kernel_us = arg_int(argc, argv, "kernel_us", 100000);
    if (samples < 1 || samples > 64)
        samples = 3;
    const size_t size = 1 << 20;
    cb_init();
    CUstream s, busy;
    CUdeviceptr d;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CHECK(cuStreamCreate(&busy, CU_STREAM_NON_BLOCKING));
    CHECK(cuMemAlloc_v2(&d, size));
    double v[64], mx = 0;
    for (int i = -1; i < samples; i++) { /* -1: warm-up, untimed */
        char *buf = aligned_alloc(4096, size);
        if (!buf)
            return 2;
        memset(buf, 7, size);
        CHECK(cuMemHostRegister_v2(buf, size, 0));
        CHECK(cuMemcpyHtoDAsync_v2(d, buf, size, s));
        CHECK(cuStreamSynchronize(s));
        static struct cb_timed k;
        if (kernel_us > 0 && i >= 0) {
            k = (struct cb_timed){(unsigned)kernel_us, 0};
            CHECK(simcudaLaunchKernel(busy, cb_timed_fn, &k));
            while (!k.started)
                sleep_us(100);
            sleep_us(1000);
        }
        uint64_t t0 = now_ns();
        CHECK(cuMemHostUnregister(buf));
        uint64_t t1 = now_ns();
        CHECK(cuStreamSynchronize(busy));
        if (i >= 0) {
            v[i] = (double)(t1 - t0) / 1e3;
            mx = v[i] > mx ? v[i] : mx;
        }
        /* Kept: freeing it would wait for safepin's release (G2), untimed
         * but slow; the process ends soon. */
    }
    printf("BENCH call_us=%.3f max_us=%.3f samples=%d\n", percentile(v, (size_t)samples, 50), mx,
           samples);
    return 0;
}
