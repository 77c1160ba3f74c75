// cuda_test.cc - the CUDA face's logic (cuda/) and the release hold
// (reaper/hold.c), called directly (no LD_PRELOAD) on simcuda. The real
// cuMemHostUnregister is wrapped to count safepin's real calls; the driver
// lock's state (simcuda.h) shows when the reaper is inside one.
#include <gtest/gtest.h>
#include <atomic>
#include <cstring>
#include <thread>
#include <sys/mman.h>
#include <unistd.h>
#include "cu_face.h"
#include "cuda_hooks.h"
#include "cuda_real.h"
#include "diag.h"
#include "interpose.h"
#include "options.h"
#include "reaper.h"
#include "registry.h"
#include "lock.h"
#include "simcuda.h"

extern "C" size_t sp_hold_bytes(void);
static size_t sp_hold_bytes_for_tests() { return sp_hold_bytes(); }

namespace {

std::atomic<int> g_real_unregister{0};
sp_CUresult (*g_saved_unregister)(void *);

// A kernel that runs until its flag is set.
struct Gate {
    std::atomic<int> open{0};
};
void k_gate(void *arg)
{
    Gate *g = static_cast<Gate *>(arg);
    while (!g->open.load())
        usleep(200);
}

// Set by a test: the first real unregister after it starts this gate kernel
// on this stream, right after the driver returned (the device turns busy
// between two of the reaper's real unregisters).
std::atomic<Gate *> g_busy_after{nullptr}; /* set by the test, taken by the reaper */
CUstream g_busy_stream;

sp_CUresult wrap_unregister(void *p)
{
    g_real_unregister++;
    sp_CUresult e = g_saved_unregister(p);
    if (Gate *g = g_busy_after.exchange(nullptr)) {
        simcudaLaunchKernel(g_busy_stream, k_gate, g);
    }
    return e;
}

size_t page() { return (size_t)sysconf(_SC_PAGESIZE); }

char *map_pages(size_t n)
{
    void *p = mmap(nullptr, n * page(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? nullptr : static_cast<char *>(p);
}

// 1 if the driver itself still has p registered (asked without safepin).
bool driver_has(void *p)
{
    unsigned type = 0;
    return sp_cu.cuPointerGetAttribute(&type, 2 /* MEMORY_TYPE */, (sp_CUdeviceptr)(uintptr_t)p) ==
           SP_CUDA_SUCCESS;
}

int state_of(void *p)
{
    sp_lock();
    sp_range *r = sp_reg_find((uintptr_t)p);
    int s = r ? (int)r->state : -1;
    sp_unlock();
    return s;
}

// Waits up to 10 s for cond; the tests assert states, never durations.
template <class F> bool eventually(F cond, int ms = 10000)
{
    for (int i = 0; i < ms; i++) {
        if (cond())
            return true;
        usleep(1000);
    }
    return cond();
}

bool lock_held()
{
    int held = 0, waiting = 0;
    simcudaDriverLockState(&held, &waiting);
    return held == 1;
}

class CudaFace : public ::testing::Test {
  protected:
    CUcontext ctx = nullptr;
    void SetUp() override
    {
        ASSERT_NO_FATAL_FAILURE(cu_face_enter(&ctx));
        if (!g_saved_unregister) {
            g_saved_unregister = sp_cu.cuMemHostUnregister;
            sp_cu.cuMemHostUnregister = wrap_unregister;
        }
        g_real_unregister = 0;
    }
    void TearDown() override
    {
        sp_reaper_drain(10000);
        sp_options_parse(nullptr);
    }
    void opts(const char *spec) { ASSERT_EQ(sp_options_parse(spec), 0) << spec; }
    sp_CUstream stream()
    {
        sp_CUstream s = nullptr;
        EXPECT_EQ(sp_cu_stream_create(&s, CU_STREAM_NON_BLOCKING, 0, 0), SP_CUDA_SUCCESS);
        return s;
    }
    sp_CUresult reg(void *p, size_t n)
    {
        return sp_cu_host_register(sp_cu.cuMemHostRegister_v2, "cuMemHostRegister_v2", p, n, 0);
    }
    // A registered page whose release is held: unregistered (async) on an
    // idle device, its markers complete, the hold taken; then a tracked
    // stream made busy (gate busy stays closed) before the hold's first
    // poll (hold_poll_us=200000 gives that launch 200 ms).
    char *held_page(Gate &busy)
    {
        char *p = map_pages(1);
        EXPECT_EQ(reg(p, page()), SP_CUDA_SUCCESS);
        EXPECT_EQ(sp_cu_host_unregister(p), SP_CUDA_SUCCESS);
        EXPECT_TRUE(eventually([] {
            sp_lock();
            size_t n = sp_hold_bytes_for_tests();
            sp_unlock();
            return n > 0;
        }));
        EXPECT_EQ(simcudaLaunchKernel((CUstream)stream(), k_gate, &busy), CUDA_SUCCESS);
        return p;
    }
};

TEST_F(CudaFace, IdenticalRegisterNestsWhereTheDriverSays712)
{
    char *p = map_pages(1);
    ASSERT_EQ(cuMemHostRegister_v2(p, page(), 0), CUDA_SUCCESS);
    EXPECT_EQ(cuMemHostRegister_v2(p, page(), 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    ASSERT_EQ(cuMemHostUnregister(p), CUDA_SUCCESS);
    ASSERT_EQ(reg(p, page()), SP_CUDA_SUCCESS);
    EXPECT_EQ(reg(p, page()), SP_CUDA_SUCCESS);
    EXPECT_EQ(sp_cu_host_unregister(p), SP_CUDA_SUCCESS);
    EXPECT_TRUE(driver_has(p));
    EXPECT_EQ(sp_cu_host_unregister(p), SP_CUDA_SUCCESS);
    EXPECT_EQ(sp_cu_host_unregister(p), SP_CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    sp_reaper_drain(10000);
    EXPECT_FALSE(driver_has(p));
    munmap(p, page());
}

TEST_F(CudaFace, CodesOfBadArguments)
{
    char *p = map_pages(2);
    EXPECT_EQ(reg(nullptr, page()), SP_CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(reg(p, 0), SP_CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(sp_cu_host_unregister(nullptr), SP_CUDA_ERROR_INVALID_VALUE);
    ASSERT_EQ(reg(p, 2 * page()), SP_CUDA_SUCCESS);
    EXPECT_EQ(reg(p + page(), page()), SP_CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    EXPECT_EQ(sp_cu_host_unregister(p + 8), SP_CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(sp_cu_mem_free((sp_CUdeviceptr)(uintptr_t)p), SP_CUDA_ERROR_INVALID_VALUE);
    EXPECT_TRUE(driver_has(p));
    EXPECT_EQ(sp_cu_host_unregister(p), SP_CUDA_SUCCESS);
    unsigned type = 0;
    EXPECT_EQ(sp_cu_pointer_get_attribute(&type, 2, (sp_CUdeviceptr)(uintptr_t)p),
              SP_CUDA_ERROR_INVALID_VALUE); /* unregistered for the program at once */
    sp_reaper_drain(10000);
    munmap(p, 2 * page());
}

TEST_F(CudaFace, HeldWhileAnotherStreamIsBusyReleasedWhenIdle)
{
    opts("hold=auto:unregister=async:hold_max_ms=0:hold_poll_us=200000");
    Gate busy;
    char *p = held_page(busy);
    // Markers done, the device busy: polls later still held, with no real
    // unregister made (it would stall the device under the driver lock).
    usleep(500 * 1000);
    EXPECT_EQ(state_of(p), SP_RANGE_RELEASING);
    EXPECT_TRUE(driver_has(p));
    EXPECT_EQ(g_real_unregister.load(), 0);
    EXPECT_FALSE(lock_held());
    busy.open = 1;
    EXPECT_TRUE(eventually([&] { return state_of(p) == -1; }));
    EXPECT_FALSE(driver_has(p));
    EXPECT_EQ(g_real_unregister.load(), 1);
    munmap(p, page());
}

// Held with the device idle at every poll, because the program registers
// and unregisters between them; released once it stops. (Idle at two polls
// in a row alone let it go within two polls, 40 ms.)
TEST_F(CudaFace, HeldWhileTheProgramKeepsRegisteringEvenOnAnIdleDevice)
{
    opts("hold=auto:unregister=async:hold_max_ms=0:hold_poll_us=20000");
    char *p = map_pages(1), *q = map_pages(1);
    ASSERT_EQ(reg(p, page()), SP_CUDA_SUCCESS);
    ASSERT_EQ(sp_cu_host_unregister(p), SP_CUDA_SUCCESS);
    ASSERT_TRUE(eventually([] {
        sp_lock();
        size_t n = sp_hold_bytes_for_tests();
        sp_unlock();
        return n > 0;
    }));
    for (int i = 0; i < 150; i++) { /* 300 ms: 15 polls */
        ASSERT_EQ(reg(q, page()), SP_CUDA_SUCCESS);
        ASSERT_EQ(sp_cu_host_unregister(q), SP_CUDA_SUCCESS);
        usleep(2000);
    }
    EXPECT_EQ(state_of(p), SP_RANGE_RELEASING);
    EXPECT_TRUE(driver_has(p));
    EXPECT_EQ(g_real_unregister.load(), 0);
    EXPECT_TRUE(eventually([&] { return state_of(p) == -1 && state_of(q) == -1; }));
    EXPECT_FALSE(driver_has(p));
    EXPECT_EQ(g_real_unregister.load(), 2);
    munmap(p, page());
    munmap(q, page());
}

// The program unmapped the memory of a held range (its deferred unmap waits
// for the release): the memory is needed, so the hold lets that range go
// even on a busy device, as for a thread waiting for the release.
TEST_F(CudaFace, HeldRangeGoesWhenTheProgramUnmapsItsMemory)
{
    opts("hold=auto:unregister=async:hold_max_ms=0:hold_poll_us=200000");
    Gate busy;
    char *p = held_page(busy);
    usleep(300 * 1000);
    EXPECT_EQ(state_of(p), SP_RANGE_RELEASING);
    EXPECT_EQ(g_real_unregister.load(), 0);
    ASSERT_EQ(sp_munmap(p, page()), 0);
    EXPECT_TRUE(eventually([] { return lock_held(); })); /* in the real unregister */
    busy.open = 1;
    EXPECT_TRUE(eventually([&] { return state_of(p) == -1; }));
    EXPECT_EQ(g_real_unregister.load(), 1);
}

// Unregistered, then freed before its markers completed: never held.
TEST_F(CudaFace, FreedRangeIsNotHeld)
{
    opts("hold=auto:unregister=async:hold_max_ms=0:hold_poll_us=10000000");
    Gate busy;
    CUstream s = (CUstream)stream();
    char *p = map_pages(1);
    ASSERT_EQ(reg(p, page()), SP_CUDA_SUCCESS);
    ASSERT_EQ(simcudaLaunchKernel(s, k_gate, &busy), CUDA_SUCCESS); /* markers wait for it */
    ASSERT_EQ(sp_cu_host_unregister(p), SP_CUDA_SUCCESS);
    ASSERT_EQ(sp_munmap(p, page()), 0);
    usleep(50 * 1000);
    EXPECT_EQ(state_of(p), SP_RANGE_RELEASING);
    busy.open = 1;
    // No idle poll before 10 s: a release before then did not wait for one.
    EXPECT_TRUE(eventually([&] { return state_of(p) == -1; }, 5000));
    EXPECT_EQ(g_real_unregister.load(), 1);
}

// hold_freed=1: the same freed range is held like any other.
TEST_F(CudaFace, HoldFreedKeepsAFreedRangeHeld)
{
    opts("hold=auto:unregister=async:hold_max_ms=0:hold_poll_us=10000000:hold_freed=1");
    Gate busy;
    CUstream s = (CUstream)stream();
    char *p = map_pages(1);
    ASSERT_EQ(reg(p, page()), SP_CUDA_SUCCESS);
    ASSERT_EQ(simcudaLaunchKernel(s, k_gate, &busy), CUDA_SUCCESS);
    ASSERT_EQ(sp_cu_host_unregister(p), SP_CUDA_SUCCESS);
    ASSERT_EQ(sp_munmap(p, page()), 0);
    busy.open = 1;
    EXPECT_TRUE(eventually([] {
        sp_lock();
        size_t n = sp_hold_bytes_for_tests();
        sp_unlock();
        return n > 0;
    }));
    usleep(300 * 1000);
    EXPECT_EQ(state_of(p), SP_RANGE_RELEASING);
    EXPECT_EQ(g_real_unregister.load(), 0);
    EXPECT_EQ(sp_reaper_drain(10000), 0u);
    EXPECT_EQ(state_of(p), -1);
    EXPECT_EQ(g_real_unregister.load(), 1);
}

// Held releases leave one at a time, the device asked before each: when it
// turns busy after the first real unregister, the others stay held (each
// would wait for that kernel under the driver lock) until it is idle again.
TEST_F(CudaFace, HeldReleasesGoOneAtATimeWhileTheDeviceStaysIdle)
{
    opts("hold=auto:unregister=async:hold_max_ms=0:hold_poll_us=20000");
    Gate busy;
    g_busy_stream = (CUstream)stream();
    char *p = map_pages(3);
    for (int i = 0; i < 3; i++) {
        ASSERT_EQ(reg(p + i * page(), page()), SP_CUDA_SUCCESS);
        ASSERT_EQ(sp_cu_host_unregister(p + i * page()), SP_CUDA_SUCCESS);
    }
    ASSERT_TRUE(eventually([] {
        sp_lock();
        size_t n = sp_hold_bytes_for_tests();
        sp_unlock();
        return n == 3 * page();
    }));
    g_busy_after = &busy;
    ASSERT_TRUE(eventually([] { return g_real_unregister.load() >= 1; }));
    usleep(200 * 1000); /* 10 polls, the device busy */
    EXPECT_EQ(g_real_unregister.load(), 1);
    int held = 0;
    for (int i = 0; i < 3; i++)
        held += state_of(p + i * page()) == SP_RANGE_RELEASING;
    EXPECT_EQ(held, 2);
    busy.open = 1;
    EXPECT_TRUE(eventually([&] {
        for (int i = 0; i < 3; i++)
            if (state_of(p + i * page()) != -1)
                return false;
        return true;
    }));
    EXPECT_EQ(g_real_unregister.load(), 3);
    munmap(p, 3 * page());
}

TEST_F(CudaFace, HoldOffReleasesAtOnceEvenOnABusyDevice)
{
    opts("hold=off:unregister=async");
    // Busy on a stream safepin does not know (created without the hook):
    // no marker waits for it, but the real unregister does.
    Gate busy;
    CUstream foreign;
    ASSERT_EQ(cuStreamCreate(&foreign, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    ASSERT_EQ(simcudaLaunchKernel(foreign, k_gate, &busy), CUDA_SUCCESS);
    char *p = map_pages(1);
    ASSERT_EQ(reg(p, page()), SP_CUDA_SUCCESS);
    ASSERT_EQ(sp_cu_host_unregister(p), SP_CUDA_SUCCESS);
    // The reaper's real unregister now waits for the busy stream, holding
    // the driver lock: the stall the hold avoids.
    EXPECT_TRUE(eventually([] { return lock_held(); }));
    busy.open = 1;
    EXPECT_TRUE(eventually([&] { return state_of(p) == -1; }));
    EXPECT_EQ(g_real_unregister.load(), 1);
    munmap(p, page());
}

TEST_F(CudaFace, HoldEndsWhenPinnedBytesExceedTheCap)
{
    // No idle poll before 10 s: a release before then was forced by the cap.
    opts("hold=auto:unregister=async:hold_max_mb=0:hold_max_ms=0:hold_poll_us=10000000");
    char *p = map_pages(1);
    ASSERT_EQ(reg(p, page()), SP_CUDA_SUCCESS);
    ASSERT_EQ(sp_cu_host_unregister(p), SP_CUDA_SUCCESS);
    EXPECT_TRUE(eventually([&] { return state_of(p) == -1; }, 5000));
    EXPECT_EQ(g_real_unregister.load(), 1);
    munmap(p, page());
}

TEST_F(CudaFace, HoldEndsWhenAThreadWaitsForTheRelease)
{
    opts("hold=auto:unregister=async:hold_max_ms=0:hold_poll_us=200000");
    Gate busy;
    char *p = held_page(busy);
    usleep(300 * 1000);
    EXPECT_EQ(state_of(p), SP_RANGE_RELEASING);
    // A larger register over it must wait for the release: the hold lets go.
    std::atomic<sp_CUresult> r{(sp_CUresult)-1};
    std::thread t([&] {
        cuCtxSetCurrent(ctx);
        r = reg(p, page() / 2);
    });
    EXPECT_TRUE(eventually([] { return lock_held(); }));
    EXPECT_EQ(r.load(), (sp_CUresult)-1);
    busy.open = 1;
    t.join();
    EXPECT_EQ(r.load(), SP_CUDA_SUCCESS);
    EXPECT_EQ(sp_cu_host_unregister(p), SP_CUDA_SUCCESS);
    sp_reaper_drain(10000);
    munmap(p, page());
}

TEST_F(CudaFace, IdenticalRegisterRevivesAHeldRangeWithoutARealCall)
{
    opts("hold=auto:unregister=async:hold_max_ms=0:hold_poll_us=200000");
    Gate busy;
    char *p = held_page(busy);
    usleep(300 * 1000);
    ASSERT_EQ(state_of(p), SP_RANGE_RELEASING);
    EXPECT_EQ(reg(p, page()), SP_CUDA_SUCCESS);
    EXPECT_EQ(state_of(p), SP_RANGE_LIVE);
    busy.open = 1;
    usleep(20 * 1000);
    EXPECT_EQ(state_of(p), SP_RANGE_LIVE);
    EXPECT_EQ(g_real_unregister.load(), 0);
    EXPECT_TRUE(driver_has(p));
    EXPECT_EQ(sp_cu_host_unregister(p), SP_CUDA_SUCCESS);
    sp_reaper_drain(10000);
    EXPECT_EQ(g_real_unregister.load(), 1);
    munmap(p, page());
}

TEST_F(CudaFace, ExitDrainLetsHeldReleasesGo)
{
    opts("hold=auto:unregister=async:hold_max_ms=0:hold_poll_us=200000");
    Gate busy;
    char *p = held_page(busy);
    usleep(300 * 1000);
    std::thread opener([&] {
        while (!lock_held())
            usleep(500);
        busy.open = 1;
    });
    EXPECT_EQ(sp_reaper_drain(10000), 0u);
    opener.join();
    EXPECT_EQ(state_of(p), -1);
    munmap(p, page());
}

TEST_F(CudaFace, UnregisterInAHostFunctionIsDeferredNot800)
{
    char *p = map_pages(1);
    ASSERT_EQ(reg(p, page()), SP_CUDA_SUCCESS);
    sp_CUstream s = stream();
    static std::atomic<int> rc{-1};
    static char *target;
    target = p;
    auto fn = [](void *) { rc = sp_cu_host_unregister(target); };
    ASSERT_EQ(sp_cu_launch_host_func(sp_cu.cuLaunchHostFunc, s, fn, nullptr), SP_CUDA_SUCCESS);
    ASSERT_EQ(cuStreamSynchronize((CUstream)s), CUDA_SUCCESS);
    EXPECT_EQ(rc.load(), SP_CUDA_SUCCESS);
    sp_reaper_drain(10000);
    EXPECT_FALSE(driver_has(p));
    munmap(p, page());
}

// NVIDIA's shared runtime refuses cudaHostUnregister inside a host function
// with 800 before it reaches the driver; safepin's cudaHostUnregister takes
// the call there (deferred, G8) and leaves every other call to the runtime.
TEST_F(CudaFace, RuntimeUnregisterInAHostFunctionIsDeferred)
{
    char *p = map_pages(1), *q = map_pages(1);
    ASSERT_EQ(reg(p, page()), SP_CUDA_SUCCESS);
    ASSERT_EQ(reg(q, page()), SP_CUDA_SUCCESS);
    sp_CUstream s = stream();
    static std::atomic<int> rc{-1};
    static char *target;
    target = p;
    auto fn = [](void *) { rc = sp_cudart_host_unregister(target, nullptr); };
    ASSERT_EQ(sp_cu_launch_host_func(sp_cu.cuLaunchHostFunc, s, fn, nullptr), SP_CUDA_SUCCESS);
    ASSERT_EQ(cuStreamSynchronize((CUstream)s), CUDA_SUCCESS);
    EXPECT_EQ(rc.load(), 0);
    sp_reaper_drain(10000);
    EXPECT_FALSE(driver_has(p));
    // Outside a host function the runtime's own function answers; this
    // process has none, so: cudaErrorInitializationError, q untouched.
    EXPECT_EQ(sp_cudart_host_unregister(q, nullptr), 3);
    EXPECT_TRUE(driver_has(q));
    EXPECT_EQ(sp_cu_host_unregister(q), SP_CUDA_SUCCESS);
    sp_reaper_drain(10000);
    munmap(p, page());
    munmap(q, page());
}

// The driver refuses cuStreamDestroy in a host function and the stream
// lives on: the same answer under safepin, and the stream keeps working.
TEST_F(CudaFace, StreamDestroyInAHostFunctionIsTheDriversAnswer)
{
    sp_CUstream s = stream();
    static sp_CUstream victim;
    static std::atomic<int> bare{-1}, hooked{-1};
    victim = stream();
    auto fn = [](void *) {
        bare = sp_cu.cuStreamDestroy_v2(victim);
        hooked = sp_cu_stream_destroy(sp_cu.cuStreamDestroy_v2, victim);
    };
    ASSERT_EQ(sp_cu_launch_host_func(sp_cu.cuLaunchHostFunc, s, fn, nullptr), SP_CUDA_SUCCESS);
    ASSERT_EQ(cuStreamSynchronize((CUstream)s), CUDA_SUCCESS);
    EXPECT_NE(bare.load(), SP_CUDA_SUCCESS);
    EXPECT_EQ(hooked.load(), bare.load());
    EXPECT_EQ(cuStreamQuery((CUstream)victim), CUDA_SUCCESS);
    EXPECT_EQ(sp_cu_stream_destroy(sp_cu.cuStreamDestroy_v2, victim), SP_CUDA_SUCCESS);
}

TEST_F(CudaFace, ContextDestroySettlesItsPendingReleases)
{
    opts("hold=auto:unregister=async:hold_max_ms=0");
    CUdevice dev;
    ASSERT_EQ(cuDeviceGet(&dev, 0), CUDA_SUCCESS);
    CUcontext own;
    ASSERT_EQ(cuCtxCreate_v2(&own, 0, dev), CUDA_SUCCESS);
    char *p = map_pages(1);
    ASSERT_EQ(reg(p, page()), SP_CUDA_SUCCESS);
    ASSERT_EQ(sp_cu_host_unregister(p), SP_CUDA_SUCCESS);
    ASSERT_EQ(sp_cu_ctx_destroy(sp_cu.cuCtxDestroy_v2, own), SP_CUDA_SUCCESS);
    EXPECT_EQ(state_of(p), -1); /* released before the context went */
    EXPECT_FALSE(driver_has(p));
    EXPECT_EQ(g_real_unregister.load(), 1);
    ASSERT_EQ(cuCtxSetCurrent(ctx), CUDA_SUCCESS);
    munmap(p, page());
}

} // namespace
