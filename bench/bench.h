/*
 * bench.h - helpers shared by the benchmark programs in bench/.
 *
 * Each program measures one figure (or a few figures of one configuration)
 * and prints them on one line:
 *
 *     BENCH key=value key=value ...
 *
 * scripts/bench runs every program without and with LD_PRELOAD=libsafepin.so
 * (interleaved), parses that line and builds the table. The programs know
 * nothing of safepin: they are plain HIP programs, built against Debian's
 * libamdhip64 and run on simhip.
 */
#ifndef SAFEPIN_BENCH_H
#define SAFEPIN_BENCH_H

#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "bench_common.h"
#include "hip_check.h"
#include "simhip.h"

/* Keep the compiler from eliding an allocation or a store. */
static inline void bench_escape(void *p)
{
    __asm__ volatile("" : : "g"(p) : "memory");
}

/* Resident set size in bytes (/proc/self/statm, second field). */
static inline long rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long size = 0, res = 0;
    if (!f)
        return -1;
    if (fscanf(f, "%ld %ld", &size, &res) != 2)
        res = -1;
    fclose(f);
    return res < 0 ? -1 : res * sysconf(_SC_PAGESIZE);
}

/*
 * Is p covered by a real (runtime-side) registration? hipHostGetDevicePointer
 * is not hooked by safepin, so it asks simhip directly: it fails once the
 * real hipHostUnregister has removed the range from simhip's table. This is
 * how the programs see when safepin's deferred release has really run.
 */
static inline int really_registered(void *p)
{
    /* The runtime's own answer: safepin answers "not registered" for a
     * range whose release is pending (G4), so ask simhip directly, past
     * every hook (simhipRawFunction). */
    typedef hipError_t (*get_fn)(void **, void *, unsigned int);
    static get_fn raw;
    if (!raw) {
        raw = (get_fn)simhipRawFunction("hipHostGetDevicePointer");
        if (!raw)
            raw = hipHostGetDevicePointer;
    }
    void *d = NULL;
    return raw(&d, p, 0) == hipSuccess;
}

/*
 * Poll until p is no longer really registered; returns the time it was
 * first seen gone (exits after timeout_s). Polls are 5 us apart, asleep:
 * the poller must not take a CPU from the thread it waits for (safepin's
 * reaper, a stream worker) on a 2-core machine. The sleep runs with a 1 us
 * timer slack (set for the poll only, and restored: a thread created
 * meanwhile would inherit it, and simhip's own sleeps must keep theirs), so
 * a sample is late by at most one poll interval (~5-15 us), never early.
 */
static inline uint64_t wait_really_unregistered(void *p, double timeout_s)
{
    if (!really_registered(p))
        return now_ns();
    uint64_t deadline = now_ns() + (uint64_t)(timeout_s * 1e9);
    int old_slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    uint64_t gone;
    for (;;) {
        struct timespec ts = { 0, 5000 };
        nanosleep(&ts, NULL);
        if (!really_registered(p)) {
            gone = now_ns();
            break;
        }
        if (now_ns() > deadline) {
            fprintf(stderr, "bench: %p still really registered after %.1f s\n", p, timeout_s);
            exit(3);
        }
    }
    if (old_slack > 0)
        prctl(PR_SET_TIMERSLACK, (unsigned long)old_slack, 0, 0, 0);
    return gone;
}

/*
 * Register from a call stack at least `depth` frames deep, as a real
 * program's registration sites are (the frames safepin records are the
 * program's, and a shallow main() would record fewer than the default 8).
 */
__attribute__((noinline, unused)) static hipError_t deep_register(int depth, void *p, size_t n,
                                                          unsigned flags)
{
    hipError_t e;
    if (depth > 0)
        e = deep_register(depth - 1, p, n, flags);
    else
        e = hipHostRegister(p, n, flags);
    __asm__ volatile("" ::: "memory"); /* no tail call: keep the frame */
    return e;
}

/* A kernel that optionally reads a byte of registered memory (checked by the
 * device), then runs for `us` microseconds, then records when it finished. */
struct timed_kernel {
    const void *dev;          /* device address read first (may be NULL) */
    unsigned us;              /* how long it runs */
    volatile int started;
    volatile uint64_t done_ns;
};

__attribute__((unused)) static void timed_kernel_fn(void *arg)
{
    struct timed_kernel *k = arg;
    k->started = 1;
    if (k->dev) {
        char c;
        simhipDeviceRead(&c, k->dev, 1);
    }
    if (k->us)
        sleep_us(k->us);
    __atomic_store_n(&k->done_ns, now_ns(), __ATOMIC_RELEASE);
}

/* `live` one-page registrations, 64 KiB apart, in a mapping of their own
 * away from the heap (the free-hook rows); with live == 0 the runtime is
 * still loaded and initialized, as in the other case. 0 on success. */
static inline int register_elsewhere(int live)
{
    const size_t stride = 64 * 1024, pg = 4096;
    if (live <= 0) {
        int dev;
        CHECK(hipGetDevice(&dev));
        return 0;
    }
    char *region = mmap(NULL, (size_t)live * stride, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (region == MAP_FAILED) {
        perror("mmap");
        return -1;
    }
    for (int i = 0; i < live; i++) {
        char *p = region + (size_t)i * stride;
        p[0] = 1;
        CHECK(hipHostRegister(p, pg, 0));
    }
    return 0;
}

#endif /* SAFEPIN_BENCH_H */
