/*
 * gpubench.c - what safepin costs and saves on a real GPU (make gpu-bench).
 * One experiment per run; bench.py runs each bare and under safepin,
 * interleaved, and prints the table. Each run prints one line:
 *
 *   BENCH key=value ...
 *
 *   unreg_idle  samples=N        4 KiB unregister, prior work done (us)
 *   unreg_busy  samples=N ms=M   unregister while an M ms kernel runs on an
 *                                unrelated non-blocking stream (us)
 *   launch      ms=M             another thread's worst and p99 launch-call
 *                                latency while one thread registers and
 *                                unregisters behind M ms of unrelated work
 *   revive      samples=N mib=S  unregister and at once the same register (us)
 *   pipeline    iters=N          4 streams; malloc, register, copy, kernel,
 *                                unregister, free; wall time until all is
 *                                done and really unregistered (ms)
 *   pipeline2   iters=N          the pipeline on two GPUs at once: two threads,
 *                                one device each (wall: the later one; ms)
 *   release     samples=N        from a kernel's end to the real unregister
 *                                of the range it used (us): p50, p99
 *   free        live=N           malloc+free 64 B and 1 MiB (ns per pair)
 *                                with N one-page registrations alive
 *
 * "Really unregistered" and "the kernel has ended" are the driver's own
 * answers (real_driver.h), so that safepin's hooks cannot flatter it.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "gpu_api.h"
#include "real_driver.h"

#define CHECK(call)                                                                   \
    do {                                                                              \
        int e_ = (call);                                                              \
        if (e_) {                                                                     \
            fprintf(stderr, "%s:%d: %s returned %d (%s)\n", __FILE__, __LINE__, #call, \
                    e_, gpu_err_name(e_));                                            \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_us(unsigned us)
{
    struct timespec ts = { us / 1000000u, (long)(us % 1000000u) * 1000L };
    nanosleep(&ts, NULL);
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v; the p-th percentile, nearest rank. */
static double pct(double *v, size_t n, double p)
{
    if (!n)
        return 0;
    qsort(v, n, sizeof *v, cmp_d);
    size_t k = (size_t)(p / 100.0 * (double)n + 0.999999);
    k = k < 1 ? 1 : k > n ? n : k;
    return v[k - 1];
}

static int arg(int argc, char **argv, const char *name, int def)
{
    size_t n = strlen(name);
    for (int i = 2; i < argc; i++)
        if (strncmp(argv[i], name, n) == 0 && argv[i][n] == '=')
            return atoi(argv[i] + n + 1);
    return def;
}

static void *pages(size_t n)
{
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        exit(2);
    }
    memset(p, 1, n);
    return p;
}

/* Wait until the driver itself no longer holds p registered. */
static uint64_t wait_gone(void *p)
{
    uint64_t deadline = now_ns() + 20000000000ull;
    int r;
    while ((r = real_registered(p)) != 0)
        if (r < 0 || now_ns() > deadline) {
            fprintf(stderr, "gpubench: %p %s\n", p,
                    r < 0 ? "cannot be asked about" : "still registered after 20 s");
            exit(3);
        }
    return now_ns();
}

static int b_unreg_idle(int argc, char **argv)
{
    int n = arg(argc, argv, "samples", 21);
    size_t sz = 4096;
    char *buf = pages(sz);
    void *dev;
    gstream s;
    CHECK(gpu_stream_create(&s, 1));
    CHECK(gpu_malloc(&dev, sz));
    double *v = calloc((size_t)n, sizeof *v);
    for (int i = -3; i < n; i++) {
        CHECK(gpu_host_register(buf, sz, 0));
        CHECK(gpu_htod_async(dev, buf, sz, s));
        CHECK(gpu_stream_sync(s));
        uint64_t t0 = now_ns();
        CHECK(gpu_host_unregister(buf));
        double us = (double)(now_ns() - t0) / 1e3;
        if (i >= 0)
            v[i] = us;
        wait_gone(buf); /* the next register must not revive */
    }
    printf("BENCH call_us=%.3f max_us=%.3f samples=%d\n", pct(v, (size_t)n, 50),
           pct(v, (size_t)n, 100), n);
    return 0;
}

static int b_unreg_busy(int argc, char **argv)
{
    int n = arg(argc, argv, "samples", 3), ms = arg(argc, argv, "ms", 500);
    size_t sz = 1 << 20;
    char *buf = pages(sz);
    void *dev;
    gstream busy, work;
    CHECK(gpu_stream_create(&busy, 1));
    CHECK(gpu_stream_create(&work, 1));
    CHECK(gpu_malloc(&dev, sz));
    double *v = calloc((size_t)n, sizeof *v);
    for (int i = 0; i < n; i++) {
        CHECK(gpu_host_register(buf, sz, 0));
        CHECK(gpu_htod_async(dev, buf, sz, work));
        CHECK(gpu_stream_sync(work));
        CHECK(gpu_spin(busy, ms));
        sleep_us(10000);
        uint64_t t0 = now_ns();
        CHECK(gpu_host_unregister(buf));
        v[i] = (double)(now_ns() - t0) / 1e3;
        CHECK(gpu_stream_sync(busy));
        wait_gone(buf);
    }
    printf("BENCH call_us=%.3f max_us=%.3f samples=%d\n", pct(v, (size_t)n, 50),
           pct(v, (size_t)n, 100), n);
    return 0;
}

struct churn { atomic_int stop; int cycles; };

static void *churn_worker(void *arg)
{
    struct churn *c = arg;
    size_t sz = 1 << 20;
    char *buf = pages(sz);
    void *dev;
    gstream work;
    CHECK(gpu_stream_create(&work, 1));
    CHECK(gpu_malloc(&dev, sz));
    while (!atomic_load(&c->stop)) {
        CHECK(gpu_host_register(buf, sz, 0));
        CHECK(gpu_htod_async(dev, buf, sz, work));
        CHECK(gpu_stream_sync(work));
        CHECK(gpu_host_unregister(buf));
        c->cycles++;
    }
    return NULL;
}

static int b_launch(int argc, char **argv)
{
    int ms = arg(argc, argv, "ms", 1000);
    gstream busy, other;
    CHECK(gpu_stream_create(&busy, 1));
    CHECK(gpu_stream_create(&other, 1));
    CHECK(gpu_spin(other, 0.001));
    CHECK(gpu_stream_sync(other));
    for (int i = 0; i < ms / 100; i++) /* unrelated work, 100 ms kernels */
        CHECK(gpu_spin(busy, 100));
    struct churn c = { 0 };
    pthread_t th;
    pthread_create(&th, NULL, churn_worker, &c);
    size_t cap = 100000, n = 0;
    double *v = calloc(cap, sizeof *v);
    uint64_t end = now_ns() + (uint64_t)ms * 1000000ull;
    while (now_ns() < end && n < cap) {
        uint64_t t0 = now_ns();
        CHECK(gpu_spin(other, 0.001));
        v[n++] = (double)(now_ns() - t0) / 1e6;
        sleep_us(500);
    }
    atomic_store(&c.stop, 1);
    pthread_join(th, NULL);
    CHECK(gpu_device_sync());
    double p99 = pct(v, n, 99), mx = pct(v, n, 100);
    printf("BENCH worst_ms=%.3f p99_ms=%.3f launches=%zu cycles=%d\n", mx, p99, n, c.cycles);
    return 0;
}

static int b_revive(int argc, char **argv)
{
    int n = arg(argc, argv, "samples", 9), mib = arg(argc, argv, "mib", 256);
    size_t sz = (size_t)mib << 20, chunk = 1 << 20;
    char *buf = pages(sz);
    void *dev;
    gstream s;
    CHECK(gpu_stream_create(&s, 1));
    CHECK(gpu_malloc(&dev, chunk));
    CHECK(gpu_host_register(buf, sz, 0));
    CHECK(gpu_htod_async(dev, buf, chunk, s));
    CHECK(gpu_stream_sync(s));
    double *v = calloc((size_t)n, sizeof *v);
    for (int i = 0; i < n; i++) {
        uint64_t t0 = now_ns();
        CHECK(gpu_host_unregister(buf));
        CHECK(gpu_host_register(buf, sz, 0));
        v[i] = (double)(now_ns() - t0) / 1e3;
        /* the range works after each cycle, at its far end too */
        CHECK(gpu_htod_async(dev, buf + sz - chunk, chunk, s));
        CHECK(gpu_stream_sync(s));
    }
    CHECK(gpu_host_unregister(buf));
    printf("BENCH cycle_us=%.3f max_us=%.3f samples=%d\n", pct(v, (size_t)n, 50),
           pct(v, (size_t)n, 100), n);
    return 0;
}

#define NSTREAMS 4

/* The pipeline on the calling thread's device: NSTREAMS streams; iters
 * times malloc, register, copy, kernel, unregister, free; the wall time (ms)
 * from the start (after barrier, when given) until all is done and really
 * unregistered. */
static double pipeline_run(int iters, pthread_barrier_t *barrier)
{
    size_t sz = 1 << 20, cnt = sz / sizeof(int);
    gstream st[NSTREAMS];
    int *dev[NSTREAMS];
    for (int i = 0; i < NSTREAMS; i++) {
        CHECK(gpu_stream_create(&st[i], 0));
        CHECK(gpu_malloc((void **)&dev[i], sz));
    }
    void **bufs = calloc((size_t)iters, sizeof *bufs);
    CHECK(gpu_device_sync());
    if (barrier)
        pthread_barrier_wait(barrier);
    uint64_t t0 = now_ns();
    for (int i = 0; i < iters; i++) {
        int k = i % NSTREAMS;
        char *buf = malloc(sz);
        memset(buf, i, sz);
        CHECK(gpu_host_register(buf, sz, 0));
        CHECK(gpu_htod_async(dev[k], buf, sz, st[k]));
        CHECK(gpu_add(st[k], dev[k], cnt, 1, 0.5));
        CHECK(gpu_host_unregister(buf));
        bufs[i] = buf;
        free(buf);
    }
    CHECK(gpu_device_sync());
    for (int i = 0; i < iters; i++) /* freed, so only the driver's table is asked */
        wait_gone(bufs[i]);
    double ms = (double)(now_ns() - t0) / 1e6;
    free(bufs);
    return ms;
}

static int b_pipeline(int argc, char **argv)
{
    int iters = arg(argc, argv, "iters", 200);
    double ms = pipeline_run(iters, NULL);
    printf("BENCH wall_ms=%.3f iters=%d\n", ms, iters);
    return 0;
}

/* pipeline2: the pipeline on two GPUs at once, one thread per device, each
 * asking the driver in its own context whether its ranges are gone; the
 * wall time is the later thread's. */
struct pipe_job { int device, iters; pthread_barrier_t *barrier; double ms; };

static void *pipe_worker(void *arg)
{
    struct pipe_job *j = arg;
    CHECK(gpu_set_device(j->device));
    j->ms = pipeline_run(j->iters, j->barrier);
    return NULL;
}

static int b_pipeline2(int argc, char **argv)
{
    int iters = arg(argc, argv, "iters", 200), ndev = 0;
    CHECK(gpu_device_count(&ndev));
    if (ndev < 2) {
        fprintf(stderr, "gpubench: pipeline2 needs two GPUs: %d device(s)\n", ndev);
        return 2;
    }
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, 2);
    struct pipe_job j[2];
    pthread_t th[2];
    for (int d = 0; d < 2; d++) {
        j[d] = (struct pipe_job){ .device = d, .iters = iters, .barrier = &barrier };
        pthread_create(&th[d], NULL, pipe_worker, &j[d]);
    }
    for (int d = 0; d < 2; d++)
        pthread_join(th[d], NULL);
    pthread_barrier_destroy(&barrier);
    printf("BENCH wall_ms=%.3f dev0_ms=%.3f dev1_ms=%.3f iters=%d\n",
           j[0].ms > j[1].ms ? j[0].ms : j[1].ms, j[0].ms, j[1].ms, iters);
    return 0;
}

/* The release probe: a thread that watches when the kernel has ended (the
 * flag it sets, read from host memory: no driver call, so no driver lock
 * to queue behind) and when the range is really unregistered (the driver's
 * own table). */
struct probe { volatile int *flag; void *p; atomic_int go; uint64_t done, gone; };

static void *prober(void *arg)
{
    struct probe *pr = arg;
    rd_use_context();
    while (!atomic_load(&pr->go))
        ;
    while (!pr->done || !pr->gone) {
        uint64_t t = now_ns();
        if (!pr->done && *pr->flag)
            pr->done = t;
        if (pr->done && !pr->gone && real_registered(pr->p) == 0)
            pr->gone = now_ns();
    }
    return NULL;
}

static int b_release(int argc, char **argv)
{
    int n = arg(argc, argv, "samples", 100);
    size_t sz = 64 * 1024;
    char *buf = pages(sz);
    int *flag = pages(4096), *dflag;
    gstream s;
    CHECK(gpu_stream_create(&s, 1));
    CHECK(gpu_host_register(flag, 4096, 1)); /* stays registered: the kernel's end flag */
    CHECK(gpu_host_dev_ptr((void **)&dflag, flag));
    double *v = calloc((size_t)n, sizeof *v);
    for (int i = -5; i < n; i++) {
        CHECK(gpu_host_register(buf, sz, 1));
        void *d;
        CHECK(gpu_host_dev_ptr(&d, buf));
        *(volatile int *)flag = 0;
        struct probe pr = { .flag = flag, .p = buf };
        pthread_t th;
        pthread_create(&th, NULL, prober, &pr);
        CHECK(gpu_touch_spin(s, d, 1.0, dflag));
        atomic_store(&pr.go, 1);
        CHECK(gpu_host_unregister(buf));
        pthread_join(th, NULL);
        CHECK(gpu_stream_sync(s));
        if (i >= 0)
            v[i] = (double)(pr.gone - pr.done) / 1e3;
    }
    CHECK(gpu_host_unregister(flag));
    printf("BENCH p50_us=%.2f p90_us=%.2f p99_us=%.2f max_us=%.2f samples=%d\n",
           pct(v, (size_t)n, 50), pct(v, (size_t)n, 90), pct(v, (size_t)n, 99),
           pct(v, (size_t)n, 100), n);
    return 0;
}

static double free_loop(size_t size, long iters)
{
    uint64_t t0 = now_ns();
    for (long i = 0; i < iters; i++) {
        char *p = malloc(size);
        __asm__ volatile("" : : "g"(p) : "memory");
        p[0] = (char)i;
        free(p);
    }
    return (double)(now_ns() - t0) / (double)iters;
}

static double free_measure(size_t size)
{
    double v[21];
    free_loop(size, 20000);
    double ns = free_loop(size, 20000);
    long iters = (long)(4e6 / (ns > 1 ? ns : 1));
    iters = iters < 1000 ? 1000 : iters;
    for (int c = 0; c < 21; c++)
        v[c] = free_loop(size, iters);
    return pct(v, 21, 50);
}

static int b_free(int argc, char **argv)
{
    int live = arg(argc, argv, "live", 0);
    const size_t stride = 64 * 1024;
    if (live > 0) {
        char *region = mmap(NULL, (size_t)live * stride, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        for (int i = 0; i < live; i++) {
            region[(size_t)i * stride] = 1;
            CHECK(gpu_host_register(region + (size_t)i * stride, 4096, 0));
        }
    }
    printf("BENCH ns_64=%.3f ns_1m=%.3f live=%d\n", free_measure(64), free_measure(1 << 20),
           live);
    fflush(stdout);
    _exit(0); /* the registrations are left to the end (not timed) */
}

static const struct { const char *name; int (*fn)(int, char **); } EXPS[] = {
    { "unreg_idle", b_unreg_idle }, { "unreg_busy", b_unreg_busy }, { "launch", b_launch },
    { "revive", b_revive }, { "pipeline", b_pipeline }, { "pipeline2", b_pipeline2 },
    { "release", b_release },
    { "free", b_free },
};

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s <experiment> [key=value ...]\n", argv[0]);
        return 2;
    }
    for (size_t i = 0; i < sizeof EXPS / sizeof EXPS[0]; i++)
        if (strcmp(argv[1], EXPS[i].name) == 0) {
            CHECK(gpu_init());
            rd_save_context();
            if (real_registered(NULL) < 0) {
                fprintf(stderr, "gpubench: the driver's cuMemHostGetFlags was not found\n");
                return 2;
            }
            int rc = EXPS[i].fn(argc, argv);
            fflush(stdout);
            return rc;
        }
    fprintf(stderr, "unknown experiment %s\n", argv[1]);
    return 2;
}
