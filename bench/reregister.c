/*
 * reregister - register, unregister, register again the same 256 MiB buffer.
 *
 * The buffer (anonymous mapping, every page written first) is registered
 * and used by a copy on the null stream (untimed). Then `cycles=K` (9)
 * times: hipHostUnregister(buf) immediately followed by
 * hipHostRegister(buf) with the same size and flags, timed together. The
 * device is idle. Natively the unregister unpins and the register pins the
 * 256 MiB again; under safepin the unregister records a release and the
 * register revives it when the real unregister has not started yet (the
 * reaper runs concurrently: a cycle that loses that race pays for the real
 * unregister and a full re-pin, and the figure shows it). The figure is the
 * median cycle, in microseconds.
 *
 *   BENCH cycle_us=<median> min_us=<min> max_us=<max> cycles=<K> mib=256 all_us=<each,...>
 */
#include "bench.h"

#include <sys/mman.h>

int main(int argc, char **argv)
{
    int cycles = arg_int(argc, argv, "cycles", 9);
    int mib = arg_int(argc, argv, "mib", 256);
    if (cycles < 1 || cycles > 64)
        cycles = 9;
    size_t size = (size_t)mib << 20;
    char *buf = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buf == MAP_FAILED) {
        perror("mmap");
        return 2;
    }
    memset(buf, 5, size);
    void *dev;
    CHECK(hipMalloc(&dev, 1 << 20));
    CHECK(hipHostRegister(buf, size, 0));
    CHECK(hipMemcpyAsync(dev, buf, 1 << 20, hipMemcpyHostToDevice, 0));
    CHECK(hipStreamSynchronize(0));

    double v[64];
    for (int i = 0; i < cycles; i++) {
        uint64_t t0 = now_ns();
        CHECK(hipHostUnregister(buf));
        CHECK(hipHostRegister(buf, size, 0));
        uint64_t t1 = now_ns();
        v[i] = (double)(t1 - t0) / 1e3;
        /* Still usable by the device after the cycle. */
        CHECK(hipMemcpyAsync(dev, buf + size - (1 << 20), 1 << 20, hipMemcpyHostToDevice, 0));
        CHECK(hipStreamSynchronize(0));
        sleep_us(2000);
    }
    double mn = v[0], mx = v[0];
    for (int i = 1; i < cycles; i++) {
        mn = v[i] < mn ? v[i] : mn;
        mx = v[i] > mx ? v[i] : mx;
    }
    char all[64 * 24] = "", *w = all;
    for (int i = 0; i < cycles; i++)
        w += sprintf(w, "%s%.1f", i ? "," : "", v[i]);
    printf("BENCH cycle_us=%.3f min_us=%.3f max_us=%.3f cycles=%d mib=%d all_us=%s\n",
           median(v, (size_t)cycles), mn, mx, cycles, mib, all);
    fflush(stdout);
    CHECK(hipHostUnregister(buf));
    munmap(buf, size);
    CHECK(hipFree(dev));
    return 0;
}
