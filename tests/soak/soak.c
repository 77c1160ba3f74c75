/*
 * soak - a long run of register / device write / unregister / free cycles
 * (issue 12, item 5; `make soak`, not part of make test).
 *
 *   soak [cycles]   default 1000000; SOAK_THREADS (8), SOAK_STREAMS (4)
 *
 * Calls safepin's logic directly (the functions its shims call), linked
 * with the core library on simhip, so that it can read safepin's table
 * sizes as it goes. Each cycle: malloc a block of 4-32 KiB, fill it,
 * register it (mapped; one cycle in 16 registers it twice: nested), a
 * device kernel on one of the shared non-blocking streams adds a tag to
 * every element, unregister (ordered: the device's bytes are there when it
 * returns), check every element, free. One cycle in 64 frees the block
 * while still registered, with the kernel queued (freed-while-registered:
 * the free is deferred until the release).
 *
 * Every second it samples RSS, open descriptors and the table sizes; at
 * the end it prints start (after a 10% warm-up) and end values, their
 * slope per 100k cycles (least squares), and the counters, which must add
 * up: register calls that succeeded = registrations + nested + revived, and
 * registrations = releases completed + leaks. Exits 1 on a lost byte, a
 * failed call, counters that do not add up, or growth (RSS more than 16 MiB
 * above its post-warm-up start, more descriptors, tables not empty after
 * the final drain).
 */
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <hip/hip_runtime_api.h>

#include "diag.h"
#include "hip.h"
#include "interpose.h"
#include "reaper.h"
#include "registry.h"
#include "simhip.h"

#define MAX_SAMPLES 100000

static long total_cycles;
static int nthreads = 8, nstreams = 4;
static hipStream_t streams[16];
static atomic_long done_cycles, calls_ok, lost, failed_calls, freed_registered;

struct sample {
    long cycles;
    double t;
    long rss_kib, fds;
    sp_table_sizes tab;
};
static struct sample samples[MAX_SAMPLES];
static int nsamples;
static int last_running; /* the last sample taken while the workers ran */

struct job {
    int *dev;
    size_t n;
    int add;
};

static void add_tag(void *p)
{
    struct job *j = p;
    int tmp[1024];
    for (size_t i = 0; i < j->n; i += 1024) {
        size_t m = j->n - i < 1024 ? j->n - i : 1024;
        simhipDeviceRead(tmp, j->dev + i, m * sizeof(int));
        for (size_t k = 0; k < m; k++)
            tmp[k] += j->add;
        simhipDeviceWrite(j->dev + i, tmp, m * sizeof(int));
    }
}

static int ok_call(hipError_t e)
{
    if (e == hipSuccess)
        return 1;
    atomic_fetch_add(&failed_calls, 1);
    return 0;
}

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void cycle(uint64_t *seed, struct job *j)
{
    size_t n = (size_t)(1 + rnd(seed) % 8) * 1024;
    int tag = (int)(rnd(seed) % 1000) + 1;
    int nested = rnd(seed) % 16 == 0;
    int free_registered = rnd(seed) % 64 == 0;
    int *p = malloc(n * sizeof(int));
    if (!p) {
        atomic_fetch_add(&failed_calls, 1);
        return;
    }
    for (size_t i = 0; i < n; i++)
        p[i] = (int)(i ^ (size_t)tag);
    if (!ok_call(sp_host_register(p, n * sizeof(int), hipHostRegisterMapped))) {
        sp_free(p);
        return;
    }
    atomic_fetch_add(&calls_ok, 1);
    if (nested && ok_call(sp_host_register(p, n * sizeof(int), hipHostRegisterMapped)))
        atomic_fetch_add(&calls_ok, 1);
    else
        nested = 0;
    void *d = NULL;
    ok_call(sp_host_get_device_pointer(&d, p, 0));
    *j = (struct job){d, n, tag};
    hipStream_t s = streams[rnd(seed) % (uint64_t)nstreams];
    ok_call(simhipLaunchKernel(s, add_tag, j));
    if (free_registered) {
        /* Freed while registered and in use: the free waits for the release,
         * which waits for the kernel (j must outlive it: wait here). */
        sp_free(p);
        ok_call(hipStreamSynchronize(s));
        atomic_fetch_add(&freed_registered, 1);
        return;
    }
    if (nested)
        ok_call(sp_host_unregister(p));
    ok_call(sp_host_unregister(p));
    long bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += p[i] != (int)(i ^ (size_t)tag) + tag;
    if (bad)
        atomic_fetch_add(&lost, bad);
    sp_free(p);
}

static void *worker(void *arg)
{
    uint64_t seed = 0x9e3779b97f4a7c15ull * (uint64_t)((long)arg + 1);
    struct job *j = malloc(sizeof *j);
    while (atomic_fetch_add(&done_cycles, 1) < total_cycles)
        cycle(&seed, j);
    free(j);
    return NULL;
}

static long count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    long n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n - 1; /* the directory's own descriptor */
}

static long rss_kib(void)
{
    long pages = 0, rss = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f && fscanf(f, "%ld %ld", &pages, &rss) != 2)
        rss = 0;
    if (f)
        fclose(f);
    return rss * (sysconf(_SC_PAGESIZE) / 1024);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void take_sample(double t0)
{
    if (nsamples >= MAX_SAMPLES)
        return;
    struct sample *s = &samples[nsamples++];
    long c = atomic_load(&done_cycles);
    s->cycles = c < total_cycles ? c : total_cycles;
    s->t = now_s() - t0;
    s->rss_kib = rss_kib();
    s->fds = count_fds();
    sp_reaper_table_sizes(&s->tab);
}

/* Least-squares slope of y over cycles, per 100k cycles, from sample i0. */
static double slope(int i0, double (*y)(const struct sample *))
{
    double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int i = i0; i <= last_running; i++) {
        double x = (double)samples[i].cycles / 1e5, v = y(&samples[i]);
        n++, sx += x, sy += v, sxx += x * x, sxy += x * v;
    }
    double den = n * sxx - sx * sx;
    return n > 1 && den != 0 ? (n * sxy - sx * sy) / den : 0;
}
static double y_rss(const struct sample *s) { return (double)s->rss_kib; }
static double y_fds(const struct sample *s) { return (double)s->fds; }
static double y_ranges(const struct sample *s) { return (double)s->tab.ranges; }
static double y_actions(const struct sample *s) { return (double)s->tab.actions; }
static double y_streams(const struct sample *s) { return (double)s->tab.streams + (double)s->tab.orphans; }

static void print_row(const char *what, const struct sample *s)
{
    printf("%-5s cycles %8ld  t %7.1f s  rss %7ld KiB  fds %3ld  ranges %4zu  releasing %4zu  "
           "actions %4zu  streams %2zu  orphan markers %2zu\n",
           what, s->cycles, s->t, s->rss_kib, s->fds, s->tab.ranges, s->tab.releasing,
           s->tab.actions, s->tab.streams, s->tab.orphans);
}

int main(int argc, char **argv)
{
    total_cycles = argc > 1 ? atol(argv[1]) : 1000000;
    if (getenv("SOAK_THREADS"))
        nthreads = atoi(getenv("SOAK_THREADS"));
    if (getenv("SOAK_STREAMS"))
        nstreams = atoi(getenv("SOAK_STREAMS"));
    if (nthreads < 1 || nthreads > 64 || nstreams < 1 || nstreams > 16 || total_cycles < 1) {
        fprintf(stderr, "soak: bad arguments\n");
        return 2;
    }
    sp_init();
    for (int i = 0; i < nstreams; i++)
        if (!ok_call(sp_stream_create_with_flags(&streams[i], hipStreamNonBlocking)))
            return 2;
    double t0 = now_s();
    take_sample(t0);
    pthread_t t[64];
    for (long i = 0; i < nthreads; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    while (atomic_load(&done_cycles) < total_cycles) {
        sleep(1);
        take_sample(t0);
    }
    last_running = nsamples - 1;
    for (int i = 0; i < nthreads; i++)
        pthread_join(t[i], NULL);
    size_t left = sp_reaper_drain(10000);
    take_sample(t0);
    for (int i = 0; i < nstreams; i++)
        ok_call(sp_stream_destroy(streams[i]));

    int w = 0; /* first sample after the 10% warm-up */
    while (w < last_running && samples[w].cycles < total_cycles / 10)
        w++;
    if (w > last_running)
        w = last_running;
    const struct sample *start = &samples[w], *end = &samples[last_running],
                        *drained = &samples[nsamples - 1];
    printf("soak: %ld cycles, %d threads, %d streams, %.1f s (%.0f cycles/s), %d samples\n",
           total_cycles, nthreads, nstreams, drained->t, (double)total_cycles / drained->t,
           nsamples);
    print_row("first", &samples[0]);
    print_row("start", start);
    print_row("end", end);
    print_row("drain", drained);
    printf("slope per 100k cycles after warm-up: rss %+.1f KiB, fds %+.2f, ranges %+.2f, "
           "actions %+.2f, streams+markers %+.2f\n",
           slope(w, y_rss), slope(w, y_fds), slope(w, y_ranges), slope(w, y_actions),
           slope(w, y_streams));
    unsigned long long reg = sp_stat.registrations, nest = sp_stat.nested,
                       rev = sp_stat.revived, done = sp_stat.releases_completed,
                       leaks = sp_stat.leaks;
    printf("counters: register calls ok %ld = registrations %llu + nested %llu + revived %llu; "
           "registrations %llu = releases completed %llu + leaks %llu + still held %zu; "
           "deferred frees %llu (freed while registered: %ld); lost bytes %ld; failed calls %ld\n",
           atomic_load(&calls_ok), reg, nest, rev, reg, done, leaks, drained->tab.ranges,
           (unsigned long long)sp_stat.deferred_frees, atomic_load(&freed_registered),
           atomic_load(&lost), atomic_load(&failed_calls));
    int bad = 0;
    if (atomic_load(&lost) || atomic_load(&failed_calls)) {
        printf("FAIL: lost bytes or failed calls\n");
        bad = 1;
    }
    if ((unsigned long long)atomic_load(&calls_ok) != reg + nest + rev ||
        reg != done + leaks + drained->tab.ranges) {
        printf("FAIL: the counters do not add up\n");
        bad = 1;
    }
    if (left || drained->tab.ranges || drained->tab.actions) {
        printf("FAIL: tables not empty after the drain\n");
        bad = 1;
    }
    if (end->rss_kib > start->rss_kib + 16 * 1024 || end->fds > start->fds) {
        printf("FAIL: RSS or descriptors grew\n");
        bad = 1;
    }
    printf(bad ? "soak: FAILED\n" : "soak: OK\n");
    return bad;
}
