/*
 * free_hook - cost of malloc+free pairs (64 B and 1 MiB), one thread, with
 * `live=N` registrations alive elsewhere (0: none).
 *
 * The N registrations are one page each, 64 KiB apart, in a mapping of
 * their own (so they never overlap the heap: safepin's free hook must find
 * out cheaply that a freed block is not registered). For each size: a
 * warm-up, a calibration (a chunk lasts about 4 ms), then 21 chunks; the
 * figure is the median chunk's nanoseconds per malloc+free pair.
 *
 *   BENCH ns_64=<ns per pair> ns_1m=<ns per pair> live=<N>
 */
#include "bench.h"

#include <stdlib.h>
#include <sys/mman.h>

#define CHUNKS 21

static double chunk_ns(size_t size, long iters)
{
    uint64_t t0 = now_ns();
    for (long i = 0; i < iters; i++) {
        char *p = malloc(size);
        bench_escape(p);
        p[0] = (char)i; /* a real program writes what it allocates */
        free(p);
    }
    return (double)(now_ns() - t0) / (double)iters;
}

static double measure(size_t size)
{
    chunk_ns(size, 20000); /* warm-up */
    long iters = 20000;
    double ns = chunk_ns(size, iters);
    iters = (long)(4e6 / (ns > 1 ? ns : 1)); /* ~4 ms per chunk */
    if (iters < 1000)
        iters = 1000;
    double v[CHUNKS];
    for (int c = 0; c < CHUNKS; c++)
        v[c] = chunk_ns(size, iters);
    return median(v, CHUNKS);
}

int main(int argc, char **argv)
{
    int live = arg_int(argc, argv, "live", 0);
    if (register_elsewhere(live) != 0)
        return 2;
    double ns64 = measure(64);
    double ns1m = measure(1 << 20);
    printf("BENCH ns_64=%.3f ns_1m=%.3f live=%d\n", ns64, ns1m, live);
    fflush(stdout);
    /* The registrations are left to the end of the process (not timed). */
    _exit(0);
}
