/*
 * regscale - registration throughput with `live=N` ranges registered, and
 * the resident memory each of those N registrations costs.
 *
 * Setup: one anonymous mapping holds N + 1024 ranges of 64 bytes, 64 bytes
 * apart (distinct ranges; some share a page, which DESIGN.md section 2 says
 * are distinct registrations). Every page is written first. A warm-up
 * register/unregister of a range elsewhere runs (and is waited for) so that
 * one-time costs (runtime init, safepin's reaper thread, the unwinder) are
 * paid before the baseline.
 *
 * Memory: RSS (/proc/self/statm) is read, the N ranges are registered (in
 * address order, each from a call stack 12 frames deep so that a
 * backtrace-recording tool records full stacks), RSS is read again:
 * rss_per_reg = growth / N. This includes the runtime's (simhip's) own
 * bookkeeping; scripts/bench subtracts the native run's figure.
 *
 * Throughput (unless --no-ops): batches of 64 pairs on the 1024 spare
 * ranges (above the N live ones in address order): 64 hipHostRegister calls
 * then the 64 matching hipHostUnregister calls, timed; then, untimed, the
 * program waits until all of them are really unregistered (safepin
 * releases in the background: waiting keeps the registry at N + <=64 ranges
 * and keeps the backlog out of the next batch). Batches run for about
 * 0.4 s (at least 10); the figure is the median batch's pairs per second
 * (one "operation" = one register + one unregister).
 *
 *   BENCH ops_per_s=<pairs/s> rss_per_reg=<bytes> live=<N> batches=<n>
 */
#include "bench.h"

#include <sys/mman.h>

#define POOL 1024
#define BATCH 64
#define STRIDE 64
#define DEPTH 12

int main(int argc, char **argv)
{
    int live = arg_int(argc, argv, "live", 100);
    int no_ops = arg_flag(argc, argv, "--no-ops");
    if (live < 0)
        live = 0;
    size_t span = ((size_t)live + POOL) * STRIDE;
    char *region = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *other = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (region == MAP_FAILED || other == MAP_FAILED) {
        perror("mmap");
        return 2;
    }
    memset(region, 1, span);
    memset(other, 1, 4096);

    /* Warm-up: runtime init, release machinery, unwinder. */
    CHECK(deep_register(DEPTH, other, 64, 0));
    CHECK(hipHostUnregister(other));
    wait_really_unregistered(other, 10.0);

    long rss0 = rss_bytes();
    for (int i = 0; i < live; i++)
        CHECK(deep_register(DEPTH, region + (size_t)i * STRIDE, STRIDE, 0));
    long rss1 = rss_bytes();
    double per_reg = live > 0 ? (double)(rss1 - rss0) / live : 0;

    double *v = NULL;
    int nb = 0;
    if (!no_ops) {
        char *pool = region + (size_t)live * STRIDE;
        const int max_batches = 4000;
        v = calloc(max_batches, sizeof *v);
        if (!v)
            return 2;
        uint64_t wall0 = now_ns();
        int k = 0;
        while (nb < max_batches && (nb < 10 || now_ns() - wall0 < 400000000ull)) {
            char *p[BATCH];
            for (int b = 0; b < BATCH; b++, k = (k + 1) % POOL)
                p[b] = pool + (size_t)k * STRIDE;
            uint64_t t0 = now_ns();
            for (int b = 0; b < BATCH; b++)
                CHECK(deep_register(DEPTH, p[b], STRIDE, 0));
            for (int b = 0; b < BATCH; b++)
                CHECK(hipHostUnregister(p[b]));
            uint64_t t1 = now_ns();
            v[nb++] = BATCH / ((double)(t1 - t0) / 1e9);
            for (int b = 0; b < BATCH; b++)
                wait_really_unregistered(p[b], 30.0);
        }
    }
    printf("BENCH ops_per_s=%.0f rss_per_reg=%.2f live=%d batches=%d\n",
           nb ? median(v, (size_t)nb) : 0.0, per_reg, live, nb);
    fflush(stdout);
    /* The N live registrations are not unregistered: natively that costs
     * ~0.1 ms each in simhip, and it is not what is measured. */
    _exit(0);
}
