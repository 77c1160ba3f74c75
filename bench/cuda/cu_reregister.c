/*
 * cu_reregister - unregister then register the same 256 MiB buffer again,
 * `cycles` times (the CUDA mirror of bench/reregister.c): a cycle costs a
 * real unpin and pin natively; safepin revives the pending registration.
 *
 *   BENCH cycle_us=<median cycle> cycles=<n>
 */
#include "cu_bench.h"

int main(int argc, char **argv)
{
    int cycles = arg_int(argc, argv, "cycles", 9);
    size_t size = (size_t)arg_int(argc, argv, "mib", 256) << 20;
    if (cycles < 1 || cycles > 64)
        cycles = 9;
    cb_init();
    char *buf = aligned_alloc(4096, size);
    if (!buf)
        return 2;
    memset(buf, 1, size);
    CHECK(cuMemHostRegister_v2(buf, size, 0));
    double v[64];
    for (int i = 0; i < cycles; i++) {
        uint64_t t0 = now_ns();
        CHECK(cuMemHostUnregister(buf));
        CHECK(cuMemHostRegister_v2(buf, size, 0));
        v[i] = (double)(now_ns() - t0) / 1e3;
    }
    CHECK(cuMemHostUnregister(buf));
    printf("BENCH cycle_us=%.3f cycles=%d\n", percentile(v, (size_t)cycles, 50), cycles);
    return 0;
}
