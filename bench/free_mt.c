/*
 * free_mt - malloc/free throughput of `threads=T` threads (default 2), with
 * `live=N` registrations alive elsewhere (default 0).
 *
 * Each thread loops malloc(size) / write a byte / free, sizes cycling over
 * 64, 128, 256 and 512 bytes, and counts its pairs in a counter of its own
 * cache line. The main thread samples the counters every 50 ms for 12
 * windows (after a 50 ms warm-up). The figure is the best window's total
 * throughput, in pairs per second: on a shared 2-core machine any other
 * process that runs takes a whole thread's share away, and the least
 * disturbed window is the one that measures malloc/free rather than the
 * neighbours (the median window is printed too, for the JSON).
 *
 *   BENCH pairs_per_s=<best> median_window_per_s=<median> threads=<T> live=<N>
 */
#include "bench.h"

#include <pthread.h>
#include <sys/mman.h>

#define WINDOWS 12
#define WINDOW_US 50000

struct counter {
    volatile uint64_t n;
    char pad[56];
} __attribute__((aligned(64)));

static struct counter counters[16];
static volatile int stop;
static pthread_barrier_t start;

static void *worker(void *arg)
{
    struct counter *c = arg;
    pthread_barrier_wait(&start);
    uint64_t n = 0;
    while (!stop) {
        for (int i = 0; i < 256; i++) {
            char *p = malloc((size_t)64 << (i & 3));
            bench_escape(p);
            p[0] = (char)i;
            free(p);
        }
        n += 256;
        __atomic_store_n(&c->n, n, __ATOMIC_RELAXED);
    }
    return NULL;
}

static uint64_t total(int t)
{
    uint64_t s = 0;
    for (int i = 0; i < t; i++)
        s += __atomic_load_n(&counters[i].n, __ATOMIC_RELAXED);
    return s;
}

int main(int argc, char **argv)
{
    int threads = arg_int(argc, argv, "threads", 2);
    int live = arg_int(argc, argv, "live", 0);
    if (threads < 1 || threads > 16)
        threads = 2;
    if (register_elsewhere(live) != 0)
        return 2;

    pthread_t th[16];
    pthread_barrier_init(&start, NULL, (unsigned)threads + 1);
    for (int i = 0; i < threads; i++)
        pthread_create(&th[i], NULL, worker, &counters[i]);
    pthread_barrier_wait(&start);
    sleep_us(WINDOW_US); /* warm-up */

    double v[WINDOWS];
    uint64_t c0 = total(threads), t0 = now_ns();
    for (int w = 0; w < WINDOWS; w++) {
        sleep_us(WINDOW_US);
        uint64_t c1 = total(threads), t1 = now_ns();
        v[w] = (double)(c1 - c0) / ((double)(t1 - t0) / 1e9);
        c0 = c1;
        t0 = t1;
    }
    stop = 1;
    for (int i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    double best = percentile(v, WINDOWS, 100);
    printf("BENCH pairs_per_s=%.0f median_window_per_s=%.0f threads=%d live=%d\n", best,
           median(v, WINDOWS), threads, live);
    fflush(stdout);
    _exit(0);
}
