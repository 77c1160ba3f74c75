// sim_common.h - helpers shared by the simhip GoogleTest suite.
//
// Death and exit tests run in "threadsafe" style: the child re-executes the
// test binary, so it starts with a fresh simhip. Tests that need another
// personality or SIMHIP_OP_DELAY_US set the environment as the first thing
// inside the EXPECT_EXIT / EXPECT_DEATH statement, before any HIP call, and
// report failures with CHILD_CHECK (which exits non-zero with a message).
#ifndef SIM_COMMON_H
#define SIM_COMMON_H

#include <gtest/gtest.h>
#include <hip/hip_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <vector>

#include "simhip.h"

#define FAULT_RE                                                                  \
    "Memory access fault by GPU node-1 \\(Agent handle: 0x[0-9a-f]+\\) on address " \
    "0x[0-9a-f]+\\. Reason: Page not present or supervisor privilege\\."

#define CHILD_CHECK(cond)                                                         \
    do {                                                                          \
        if (!(cond)) {                                                            \
            fprintf(stderr, "CHILD_CHECK failed %s:%d: %s\n", __FILE__, __LINE__, #cond); \
            _exit(3);                                                             \
        }                                                                         \
    } while (0)

// Run body in a fresh child process with env var name=value; it must exit 0.
#define IN_CHILD_WITH_ENV(name, value, ...)                                       \
    do {                                                                          \
        auto child_body_ = [&]() { __VA_ARGS__; };                                \
        EXPECT_EXIT(                                                              \
            {                                                                     \
                setenv(name, value, 1);                                           \
                child_body_();                                                    \
                _exit(0);                                                         \
            },                                                                    \
            ::testing::ExitedWithCode(0), "");                                    \
    } while (0)

static inline double now_ms()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static inline void sleep_ms(int ms)
{
    usleep(ms * 1000);
}

static inline size_t page()
{
    return (size_t)sysconf(_SC_PAGESIZE);
}

// Fresh anonymous pages (never registered, always page aligned).
static inline char *map_pages(size_t n)
{
    void *p = mmap(NULL, n * page(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? nullptr : (char *)p;
}

// ---- kernels ------------------------------------------------------------

// Sleeps, then writes value (through a checked device write) to dst.
struct SleepWrite {
    int sleep_ms;
    int *dst;
    int value;
};
static inline void k_sleep_write(void *a)
{
    SleepWrite *k = (SleepWrite *)a;
    sleep_ms(k->sleep_ms);
    simhipDeviceWrite(k->dst, &k->value, sizeof k->value);
}

// Reads *src (checked) into *out (host memory of the test).
struct ReadInto {
    const int *src;
    int *out;
};
static inline void k_read_into(void *a)
{
    ReadInto *k = (ReadInto *)a;
    simhipDeviceRead(k->out, k->src, sizeof *k->out);
}

// Appends id to a shared log (order tests).
struct OrderLog {
    std::mutex m;
    std::vector<int> v;
    void add(int id)
    {
        std::lock_guard<std::mutex> g(m);
        v.push_back(id);
    }
};
struct LogEntry {
    OrderLog *log;
    int id;
    int sleep_ms;
};
static inline void k_log(void *a)
{
    LogEntry *e = (LogEntry *)a;
    if (e->sleep_ms)
        sleep_ms(e->sleep_ms);
    e->log->add(e->id);
}
static inline void h_log(void *a)
{
    k_log(a);
}

// A host-memory int the device may access (registered, page of its own).
struct PinnedInts {
    int *p = nullptr;
    size_t n;
    explicit PinnedInts(size_t count = 1024) : n(count)
    {
        p = (int *)map_pages((count * sizeof(int) + page() - 1) / page());
        if (p && hipHostRegister(p, count * sizeof(int), 0) != hipSuccess)
            p = nullptr;
    }
    ~PinnedInts()
    {
        if (p) {
            (void)hipHostUnregister(p);
            munmap(p, ((n * sizeof(int) + page() - 1) / page()) * page());
        }
    }
};

#endif
