/*
 * hazards.c - each hazard of DESIGN section 1 as an unmodified CUDA program
 * meets it on a real GPU, written once against gpu_api.h and built three
 * ways: nvcc's default static cudart, -cudart shared, and the driver API
 * with -lcuda.
 *
 *   hazards <test>       run one test; prints one line
 *   GPUTEST <test> api=<api> result=<hazard|ok|fail|skip> <evidence>
 *
 * result=hazard: the hazard happened (the evidence says how: the error
 * code, the byte that was wrong, the stall time); result=ok: the program got
 * what a correct runtime gives (right codes, right bytes, no stall);
 * result=fail: neither (the program could not run the scenario);
 * result=skip: the machine cannot run it (one GPU for a two-GPU test). run.py
 * runs each test bare and under safepin and judges the pair.
 */
#include <pthread.h>
#include <stdarg.h>
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

static const char *test_name;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void sleep_ms(double ms)
{
    struct timespec ts = { (time_t)(ms / 1e3), (long)((ms - (double)(time_t)(ms / 1e3) * 1e3) * 1e6) };
    nanosleep(&ts, NULL);
}

__attribute__((format(printf, 2, 3))) static int report(const char *result, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    printf("GPUTEST %s api=%s result=%s %s\n", test_name, gpu_api_name(), result, buf);
    fflush(stdout);
    return strcmp(result, "fail") == 0 ? 1 : 0;
}

/* A call that must succeed for the scenario to run at all. */
#define MUST(call)                                                                 \
    do {                                                                           \
        int e_ = (call);                                                           \
        if (e_)                                                                    \
            return report("fail", "%s returned %d (%s) at line %d", #call, e_,     \
                          gpu_err_name(e_), __LINE__);                             \
    } while (0)

static int pattern(size_t i, int seed)
{
    return (int)((i * 2654435761u) ^ (unsigned)seed) & 0x3fffffff;
}

/* Index of the first int of p[0..n) that is not pattern(i, seed) + add, or -1. */
static long first_wrong(const int *p, size_t n, int seed, int add)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != pattern(i, seed) + add)
            return (long)i;
    return -1;
}

static void *map_pages(void *hint, size_t n)
{
    void *p = mmap(hint, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

#define BUSY_MS 500.0

/* ---- the device-wide stall --------------------------------------------------
 * A staging buffer is copied on its own stream and that stream synchronized;
 * meanwhile an unrelated 500 ms kernel runs on another non-blocking stream.
 * The unregister has nothing left to wait for, yet the driver waits for the
 * whole device. */
static int t_stall(void)
{
    gstream busy, work;
    size_t n = 4 << 20;
    char *buf = map_pages(NULL, n);
    void *dev;
    MUST(gpu_stream_create(&busy, 1));
    MUST(gpu_stream_create(&work, 1));
    MUST(gpu_malloc(&dev, n));
    memset(buf, 7, n);
    MUST(gpu_host_register(buf, n, 0));
    MUST(gpu_htod_async(dev, buf, n, work));
    MUST(gpu_stream_sync(work));
    MUST(gpu_spin(busy, BUSY_MS));
    sleep_ms(20); /* the kernel is running */
    double t0 = now_ms();
    int e = gpu_host_unregister(buf);
    double dt = now_ms() - t0;
    MUST(gpu_stream_sync(busy));
    if (e)
        return report("fail", "unregister returned %d (%s)", e, gpu_err_name(e));
    if (dt >= 250)
        return report("hazard", "stall=%.1fms: unregister waited for an unrelated %.0f ms kernel",
                      dt, BUSY_MS);
    if (dt < 50)
        return report("ok", "stall=%.3fms: unregister returned at once (kernel of %.0f ms on "
                      "another stream)", dt, BUSY_MS);
    return report("fail", "stall=%.1fms: neither at once nor the whole kernel", dt);
}

/* ---- another thread's launch stalled -----------------------------------------
 * A worker thread unregisters its staging buffer while an unrelated 500 ms
 * kernel runs; the main thread, meanwhile, launches a tiny kernel on a third
 * stream and times the launch call. */
struct unreg_job { char *buf; atomic_int started; int err; double ms; };

static void *unreg_worker(void *arg)
{
    struct unreg_job *j = arg;
    atomic_store(&j->started, 1);
    double t0 = now_ms();
    j->err = gpu_host_unregister(j->buf);
    j->ms = now_ms() - t0;
    return NULL;
}

static int t_launch(void)
{
    gstream busy, work, other;
    size_t n = 1 << 20;
    char *buf = map_pages(NULL, n);
    void *dev;
    MUST(gpu_stream_create(&busy, 1));
    MUST(gpu_stream_create(&work, 1));
    MUST(gpu_stream_create(&other, 1));
    MUST(gpu_malloc(&dev, n));
    MUST(gpu_host_register(buf, n, 0));
    MUST(gpu_htod_async(dev, buf, n, work));
    MUST(gpu_stream_sync(work));
    MUST(gpu_spin(other, 0.001)); /* warm: the first launch loads the module */
    MUST(gpu_stream_sync(other));
    MUST(gpu_spin(busy, BUSY_MS));
    sleep_ms(20);
    struct unreg_job j = { .buf = buf };
    pthread_t th;
    pthread_create(&th, NULL, unreg_worker, &j);
    while (!atomic_load(&j.started))
        ;
    sleep_ms(30); /* the worker is inside its unregister */
    double t0 = now_ms();
    int e = gpu_spin(other, 0.001);
    double launch = now_ms() - t0;
    pthread_join(th, NULL);
    MUST(gpu_device_sync());
    if (e || j.err)
        return report("fail", "launch returned %d, unregister %d (%s)", e, j.err,
                      gpu_err_name(j.err));
    if (launch >= 100)
        return report("hazard", "stall=%.1fms: a launch on another thread and stream waited "
                      "behind the unregister (which took %.1f ms)", launch, j.ms);
    if (launch < 20)
        return report("ok", "stall=%.3fms: the launch did not wait (the other thread's "
                      "unregister took %.1f ms)", launch, j.ms);
    return report("fail", "stall=%.1fms: launch latency between the two verdicts", launch);
}

/* ---- unregister in a host function -------------------------------------------
 * The stream's last step, a host function, unregisters the staging buffer
 * once the copy is done, as a "release when the stream gets here" idiom. */
struct hf_job { char *buf; int err; atomic_int ran; };

static void unreg_in_host_func(void *arg)
{
    struct hf_job *j = arg;
    j->err = gpu_host_unregister(j->buf);
    atomic_store(&j->ran, 1);
}

static int t_hostfunc(void)
{
    gstream s;
    size_t n = 1 << 20;
    char *buf = map_pages(NULL, n);
    void *dev;
    MUST(gpu_stream_create(&s, 1));
    MUST(gpu_malloc(&dev, n));
    memset(buf, 3, n);
    MUST(gpu_host_register(buf, n, 0));
    MUST(gpu_htod_async(dev, buf, n, s));
    struct hf_job j = { .buf = buf };
    MUST(gpu_host_func(s, unreg_in_host_func, &j));
    MUST(gpu_stream_sync(s));
    if (!atomic_load(&j.ran))
        return report("fail", "the host function did not run");
    /* The driver's own table, polled up to 2 s (safepin releases later). */
    int reg = 1;
    for (int i = 0; i < 200 && (reg = real_registered(buf)) == 1; i++)
        sleep_ms(10);
    if (reg < 0)
        return report("fail", "the real cuMemHostGetFlags was not found");
    if (j.err == 800 && reg == 1) {
        gpu_host_unregister(buf);
        return report("hazard", "code=800 (%s) in the host function; the pin leaked (still "
                      "registered after 2 s)", gpu_err_name(j.err));
    }
    if (j.err == 0 && reg == 0)
        return report("ok", "code=0 in the host function; the driver released the range "
                      "afterwards");
    return report("fail", "code=%d in the host function, still registered: %d", j.err, reg);
}

/* ---- identical re-register -----------------------------------------------------
 * Two components register the same buffer (same base, size and flags), each
 * unregistering its own when done, as nested registration works on HIP. */
static int t_rereg(void)
{
    gstream s;
    size_t n = 1 << 20, cnt = n / sizeof(int);
    int *buf = map_pages(NULL, n);
    int *dev;
    MUST(gpu_stream_create(&s, 1));
    MUST(gpu_malloc((void **)&dev, n));
    MUST(gpu_host_register(buf, n, 0));
    int e2 = gpu_host_register(buf, n, 0);
    MUST(gpu_fill(s, dev, cnt, 5, 0));
    MUST(gpu_dtoh_async(buf, dev, n, s));
    MUST(gpu_stream_sync(s));
    int u1 = gpu_host_unregister(buf);
    int u2 = gpu_host_unregister(buf);
    long bad = first_wrong(buf, cnt, 5, 0);
    if (e2 == 712)
        return report("hazard", "code=712 (%s) on the second identical register; unregisters "
                      "%d, %d", gpu_err_name(e2), u1, u2);
    if (e2 == 0 && u1 == 0 && u2 == 0 && bad < 0)
        return report("ok", "code=0 on the second register (nested); unregisters 0, 0; data "
                      "right");
    return report("fail", "register %d, unregisters %d %d, first wrong int %ld", e2, u1, u2, bad);
}

/* ---- new memory at an address whose registration was unmapped ---------------
 * An arena is registered and unmapped without unregister; the next arena
 * lands at the same address and is registered. */
static int t_reuse(void)
{
    gstream s;
    size_t n = 8 << 20, cnt = n / sizeof(int);
    int *dev;
    MUST(gpu_stream_create(&s, 1));
    MUST(gpu_malloc((void **)&dev, n));
    int *a = map_pages(NULL, n);
    MUST(gpu_host_register(a, n, 0));
    MUST(gpu_htod_async(dev, a, n, s));
    MUST(gpu_stream_sync(s));
    munmap(a, n); /* forgot the unregister */
    /* The kernel gives the hint address back at once, unless the unmap was
     * deferred: then the arena lands elsewhere, as right for the program. */
    int *b = map_pages(a, n);
    const char *where = b == a ? "the unmapped arena's address" : "a new address";
    for (size_t i = 0; i < cnt; i++)
        b[i] = pattern(i, 9);
    int e = gpu_host_register(b, n, 0);
    if (e == 712)
        return report("hazard", "code=712 (%s) registering new memory at %s %p",
                      gpu_err_name(e), where, (void *)b);
    if (e)
        return report("fail", "register returned %d (%s)", e, gpu_err_name(e));
    MUST(gpu_htod_async(dev, b, n, s));
    MUST(gpu_stream_sync(s));
    memset(b, 0, n);
    MUST(gpu_dtoh_async(b, dev, n, s));
    MUST(gpu_stream_sync(s));
    long bad = first_wrong(b, cnt, 9, 0);
    MUST(gpu_host_unregister(b));
    if (bad >= 0)
        return report("fail", "code=0 but int %ld came back wrong", bad);
    return report("ok", "code=0 at %s %p; the round trip is right", where, (void *)b);
}

/* ---- writes lost into pages still pinned after munmap ---------------------------
 * As above, but the program ignores the register's error (HIP before 7.x
 * returned success here) and lets a kernel write through the device address
 * of its new arena. */
static int t_lost(void)
{
    gstream s;
    size_t n = 8 << 20, cnt = n / sizeof(int);
    MUST(gpu_stream_create(&s, 1));
    int *a = map_pages(NULL, n);
    MUST(gpu_host_register(a, n, 1));
    munmap(a, n);
    int *b = map_pages(a, n); /* at a, unless the unmap was deferred */
    int e = gpu_host_register(b, n, 1); /* unchecked, as the legacy code does */
    int *dev;
    MUST(gpu_host_dev_ptr((void **)&dev, b));
    MUST(gpu_fill(s, dev, cnt, 11, 0));
    MUST(gpu_stream_sync(s));
    long bad = first_wrong(b, cnt, 11, 0);
    if (bad >= 0) {
        int got = b[bad], want = pattern((size_t)bad, 11);
        gpu_host_unregister(b);
        return report("hazard", "wrong byte at int %ld: got %d, want %d (the kernel's writes "
                      "went to the unmapped pages; register said %d)", bad, got, want, e);
    }
    MUST(gpu_host_unregister(b));
    return report("ok", "every int the kernel wrote is in the new arena (register said %d, "
                  "%s address)", e, b == a ? "same" : "new");
}

/* ---- a capture killed by another thread ------------------------------------------
 * One thread captures a graph in the global mode; another thread meanwhile
 * unregisters an unrelated buffer it is done with. */
struct cap_job { char *buf; atomic_int go; int err; };

static void *cap_unreg(void *arg)
{
    struct cap_job *j = arg;
    while (!atomic_load(&j->go))
        ;
    j->err = gpu_host_unregister(j->buf);
    atomic_store(&j->go, 2);
    return NULL;
}

static int t_capture(void)
{
    gstream s, work;
    size_t n = 1 << 20, cnt = n / sizeof(int);
    int *dev, *host = map_pages(NULL, n);
    char *other = map_pages(NULL, n);
    MUST(gpu_stream_create(&s, 0));
    MUST(gpu_stream_create(&work, 1));
    MUST(gpu_malloc((void **)&dev, n));
    MUST(gpu_host_register(other, n, 0));
    MUST(gpu_htod_async(dev, other, n, work));
    MUST(gpu_stream_sync(work));
    MUST(gpu_fill(s, dev, cnt, 13, 0));
    MUST(gpu_stream_sync(s));
    struct cap_job j = { .buf = other };
    pthread_t th;
    pthread_create(&th, NULL, cap_unreg, &j);
    MUST(gpu_begin_capture(s, 1));
    int ek = gpu_add(s, dev, cnt, 1, 0);
    atomic_store(&j.go, 1);
    while (atomic_load(&j.go) != 2)
        ;
    int ee = gpu_end_capture_run(s);
    pthread_join(th, NULL);
    if (ek)
        return report("fail", "the captured launch returned %d", ek);
    if (j.err == 900 && ee == 901)
        return report("hazard", "code=900 (%s) for the other thread's unregister, code=901 "
                      "(%s) ending the capture", gpu_err_name(j.err), gpu_err_name(ee));
    if (j.err || ee)
        return report("fail", "unregister %d (%s), end capture %d (%s)", j.err,
                      gpu_err_name(j.err), ee, gpu_err_name(ee));
    MUST(gpu_dtoh_async(host, dev, n, work));
    MUST(gpu_stream_sync(work));
    long bad = first_wrong(host, cnt, 13, 1);
    if (bad >= 0)
        return report("fail", "codes 0 but the graph's result is wrong at int %ld", bad);
    return report("ok", "code=0 for the unregister, the capture survived and its graph "
                  "gave the right result");
}

/* ---- implicit-sync readers ----------------------------------------------------------
 * A kernel writes into a mapped registration after a 200 ms computation; the
 * program unregisters without synchronizing and reads the bytes, relying on
 * the unregister's wait (as real programs do: DESIGN G3). */
static int t_implicit(void)
{
    gstream s;
    size_t n = 1 << 20, cnt = n / sizeof(int);
    int *buf = map_pages(NULL, n), *dev;
    MUST(gpu_stream_create(&s, 1));
    MUST(gpu_host_register(buf, n, 1));
    MUST(gpu_host_dev_ptr((void **)&dev, buf));
    MUST(gpu_fill(s, dev, cnt, 17, 200));
    double t0 = now_ms();
    MUST(gpu_host_unregister(buf));
    double dt = now_ms() - t0;
    long bad = first_wrong(buf, cnt, 17, 0);
    MUST(gpu_stream_sync(s));
    if (bad >= 0)
        return report("hazard", "wrong byte at int %ld right after unregister (%.1f ms): the "
                      "reader saw stale bytes", bad, dt);
    return report("ok", "right bytes right after unregister (it took %.1f ms)", dt);
}

/* ---- two devices ---------------------------------------------------------------
 * A registration made while device 0 is current (Portable | Mapped) is used
 * by a 500 ms kernel on device 1 through its device address, on a blocking
 * stream, a non-blocking one, or the per-thread stream (dev1_unrelated: the
 * kernel on device 1 does not touch it; the range was used on device 0 and
 * is done with). A worker thread, device 0 current, unregisters it, reads
 * the kernel's result at once (as an implicit-sync reader does) and unmaps
 * it; meanwhile the main thread launches a tiny kernel on each device and
 * times the launch calls. Bare, the unregister either waits for device 1
 * (and the launches stall behind it: t_launch's verdict) or it does not
 * (the bytes read are stale, device 1's kernel writes into unmapped
 * memory). Needs two GPUs: "result=skip" with one. */
enum two_dev { TD_BLOCKING, TD_NONBLOCKING, TD_PER_THREAD, TD_UNRELATED };

struct td_job { int *buf; size_t n, cnt; int check; atomic_int started; int err; long bad; double ms; };

static void *td_worker(void *arg)
{
    struct td_job *j = arg;
    j->err = gpu_set_device(0);
    atomic_store(&j->started, 1);
    double t0 = now_ms();
    if (!j->err)
        j->err = gpu_host_unregister(j->buf);
    j->ms = now_ms() - t0;
    j->bad = j->check ? first_wrong(j->buf, j->cnt, 21, 0) : -1;
    munmap(j->buf, j->n);
    return NULL;
}

static int t_two_dev(enum two_dev kind)
{
    int ndev = 0;
    MUST(gpu_device_count(&ndev));
    if (ndev < 2)
        return report("skip", "needs two GPUs: %d device(s)", ndev);
    size_t n = 4 << 20, cnt = n / sizeof(int);
    int *buf = map_pages(NULL, n), *dev = NULL;
    gstream o0, o1, s = GPU_STREAM_PER_THREAD, s0;
    MUST(gpu_set_device(0));
    MUST(gpu_stream_create(&o0, 1));
    MUST(gpu_stream_create(&s0, 1));
    MUST(gpu_spin(o0, 0.001)); /* warm: the first launch loads the module */
    MUST(gpu_stream_sync(o0));
    MUST(gpu_host_register_portable(buf, n));
    if (kind == TD_UNRELATED) {
        void *d0;
        MUST(gpu_malloc(&d0, n));
        MUST(gpu_htod_async(d0, buf, n, s0));
        MUST(gpu_stream_sync(s0));
    } else {
        MUST(gpu_host_dev_ptr((void **)&dev, buf));
    }
    MUST(gpu_set_device(1));
    MUST(gpu_stream_create(&o1, 1));
    MUST(gpu_spin(o1, 0.001));
    MUST(gpu_stream_sync(o1));
    if (kind == TD_BLOCKING || kind == TD_NONBLOCKING || kind == TD_UNRELATED)
        MUST(gpu_stream_create(&s, kind != TD_BLOCKING));
    if (kind == TD_UNRELATED)
        MUST(gpu_spin(s, BUSY_MS));
    else
        MUST(gpu_fill(s, dev, cnt, 21, BUSY_MS));
    sleep_ms(20); /* device 1's kernel is running */
    struct td_job j = { .buf = buf, .n = n, .cnt = cnt, .check = kind != TD_UNRELATED };
    pthread_t th;
    pthread_create(&th, NULL, td_worker, &j);
    while (!atomic_load(&j.started))
        ;
    sleep_ms(30); /* the worker is inside its unregister */
    double launch = 0;
    int el = 0;
    for (int d = 0; d < 2 && !el; d++) {
        el = gpu_set_device(d);
        double t0 = now_ms();
        if (!el)
            el = gpu_spin(d ? o1 : o0, 0.001);
        double dt = now_ms() - t0;
        launch = dt > launch ? dt : launch;
    }
    pthread_join(th, NULL);
    MUST(gpu_set_device(1));
    int es = gpu_stream_sync(s); /* an illegal address on device 1 shows here */
    if (j.err || el)
        return report("fail", "unregister returned %d (%s), a launch %d", j.err,
                      gpu_err_name(j.err), el);
    if (es)
        return report("hazard", "device 1's kernel failed: code=%d (%s) after the range was "
                      "unregistered (%.1f ms) and unmapped", es, gpu_err_name(es), j.ms);
    if (j.bad >= 0)
        return report("hazard", "wrong byte at int %ld right after the unregister (%.1f ms): "
                      "it did not wait for device 1's kernel", j.bad, j.ms);
    if (launch >= 100)
        return report("hazard", "stall=%.1fms: a launch on another thread waited behind the "
                      "unregister on device 0's thread (which took %.1f ms)", launch, j.ms);
    if (launch < 20)
        return report("ok", "stall=%.3fms: the launches on devices 0 and 1 did not wait; %s "
                      "(the unregister took %.1f ms)", launch,
                      j.check ? "right bytes right after the unregister" : "nothing to read",
                      j.ms);
    return report("fail", "stall=%.1fms: launch latency between the two verdicts", launch);
}

static int t_dev1_blocking(void) { return t_two_dev(TD_BLOCKING); }
static int t_dev1_nonblocking(void) { return t_two_dev(TD_NONBLOCKING); }
static int t_dev1_per_thread(void) { return t_two_dev(TD_PER_THREAD); }
static int t_dev1_unrelated(void) { return t_two_dev(TD_UNRELATED); }

static const struct { const char *name; int (*fn)(void); } TESTS[] = {
    { "stall", t_stall }, { "launch", t_launch }, { "hostfunc", t_hostfunc },
    { "rereg", t_rereg }, { "reuse", t_reuse }, { "lost", t_lost },
    { "capture", t_capture }, { "implicit", t_implicit },
    { "dev1_blocking", t_dev1_blocking }, { "dev1_nonblocking", t_dev1_nonblocking },
    { "dev1_per_thread", t_dev1_per_thread }, { "dev1_unrelated", t_dev1_unrelated },
};

int main(int argc, char **argv)
{
    size_t nt = sizeof TESTS / sizeof TESTS[0];
    if (argc != 2) {
        fprintf(stderr, "usage: %s <test>; tests:", argv[0]);
        for (size_t i = 0; i < nt; i++)
            fprintf(stderr, " %s", TESTS[i].name);
        fprintf(stderr, "\n");
        return 2;
    }
    test_name = argv[1];
    for (size_t i = 0; i < nt; i++)
        if (strcmp(argv[1], TESTS[i].name) == 0) {
            int e = gpu_init();
            if (e)
                return report("fail", "init returned %d (%s)", e, gpu_err_name(e));
            rd_save_context();
            return TESTS[i].fn();
        }
    fprintf(stderr, "unknown test %s\n", argv[1]);
    return 2;
}
