// sc_common.h - helpers shared by the simcuda GoogleTest suite (the CUDA
// driver face of the simulated device). Every test makes the primary
// context of device 0 current on its thread first (sc_ctx()).
#ifndef SC_COMMON_H
#define SC_COMMON_H

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <functional>

#include "simcuda.h"

static inline void sc_ctx()
{
    CUcontext c = nullptr;
    ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
    ASSERT_EQ(cuDevicePrimaryCtxRetain(&c, 0), CUDA_SUCCESS);
    ASSERT_EQ(cuCtxSetCurrent(c), CUDA_SUCCESS);
}

static inline size_t page()
{
    return (size_t)sysconf(_SC_PAGESIZE);
}

// Fresh anonymous pages; at a fixed address when hint is given.
static inline char *map_pages(size_t n, void *hint = nullptr)
{
    int fl = MAP_PRIVATE | MAP_ANONYMOUS | (hint ? MAP_FIXED_NOREPLACE : 0);
    void *p = mmap(hint, n * page(), PROT_READ | PROT_WRITE, fl, -1, 0);
    return p == MAP_FAILED ? nullptr : (char *)p;
}

static inline CUdeviceptr dptr(const void *p)
{
    return (CUdeviceptr)(uintptr_t)p;
}

// Wait (no timing assert: a bound against hangs) until pred holds.
static inline bool wait_until(const std::function<bool()> &pred, int limit_ms = 20000)
{
    for (int i = 0; i < limit_ms * 5; i++) {
        if (pred())
            return true;
        usleep(200);
    }
    return pred();
}

// A kernel that holds its stream until opened.
struct Gate {
    std::atomic<int> entered{0};
    std::atomic<int> open{0};
};
static inline void k_gate(void *a)
{
    Gate *g = (Gate *)a;
    g->entered = 1;
    while (!g->open.load())
        usleep(200);
}

// Writes value to dst through a checked device write.
struct WriteInt {
    int *dst;
    int value;
};
static inline void k_write(void *a)
{
    WriteInt *k = (WriteInt *)a;
    simcudaDeviceWrite(k->dst, &k->value, sizeof k->value);
}

// Reads *src (checked) into *out.
struct ReadInt {
    const int *src;
    int *out;
};
static inline void k_read(void *a)
{
    ReadInt *k = (ReadInt *)a;
    simcudaDeviceRead(k->out, k->src, sizeof *k->out);
}

static inline int lock_held()
{
    int h, w;
    simcudaDriverLockState(&h, &w);
    return h;
}

static inline int lock_waiting()
{
    int h, w;
    simcudaDriverLockState(&h, &w);
    return w;
}

#endif
