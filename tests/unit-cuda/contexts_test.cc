// contexts_test.cc - markers cover every context the process can use, not
// only those safepin saw a call in (DESIGN section 4): another thread makes
// device 1's primary context current without any hooked call, or creates a
// context there, and runs a kernel on its per-thread or legacy stream;
// a range registered in device 0's context is unregistered meanwhile. The
// ordered unregister must wait for that kernel, and the reaper's real
// unregister (which waits for the whole device holding the driver lock)
// must not run while it runs. Two simulated devices (SIMHIP_DEVICES=2, set
// before simcuda starts: it reads it at the first driver call).
#include <gtest/gtest.h>
#include <atomic>
#include <cstdlib>
#include <thread>
#include <sys/mman.h>
#include <unistd.h>
#include "cu_face.h"
#include "cuda_hooks.h"
#include "cuda_real.h"
#include "options.h"
#include "reaper.h"
#include "simcuda.h"

static const int two_devices = setenv("SIMHIP_DEVICES", "2", 0);

namespace {

// A kernel that runs until its gate opens, then says it ran.
struct Gate {
    std::atomic<int> open{0}, ran{0};
};
void k_gate(void *arg)
{
    Gate *g = static_cast<Gate *>(arg);
    while (!g->open.load())
        usleep(200);
    g->ran = 1;
}

size_t page() { return (size_t)sysconf(_SC_PAGESIZE); }

bool driver_has(void *p)
{
    unsigned type = 0;
    return sp_cu.cuPointerGetAttribute(&type, 2 /* MEMORY_TYPE */, (sp_CUdeviceptr)(uintptr_t)p) ==
           SP_CUDA_SUCCESS;
}

bool lock_held()
{
    int held = 0, waiting = 0;
    simcudaDriverLockState(&held, &waiting);
    return held == 1;
}

bool primary_active(CUdevice dev)
{
    unsigned flags = 0;
    int active = -1;
    EXPECT_EQ(cuDevicePrimaryCtxGetState(dev, &flags, &active), CUDA_SUCCESS);
    return active == 1;
}

class Contexts : public ::testing::Test {
  protected:
    CUcontext ctx0 = nullptr;
    CUdevice dev1 = 0;
    char *p = nullptr;
    void SetUp() override
    {
        ASSERT_EQ(two_devices, 0);
        ASSERT_NO_FATAL_FAILURE(cu_face_enter(&ctx0));
        int n = 0;
        ASSERT_EQ(cuDeviceGetCount(&n), CUDA_SUCCESS);
        ASSERT_GE(n, 2);
        ASSERT_EQ(cuDeviceGet(&dev1, 1), CUDA_SUCCESS);
        void *m = mmap(nullptr, page(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        ASSERT_NE(m, MAP_FAILED);
        p = static_cast<char *>(m);
        ASSERT_EQ(sp_cu_host_register(sp_cu.cuMemHostRegister_v2, "cuMemHostRegister_v2", p,
                                      page(), 0),
                  SP_CUDA_SUCCESS);
    }
    void TearDown() override
    {
        sp_reaper_drain(10000);
        sp_options_parse(nullptr);
        if (p)
            munmap(p, page());
    }
};

// Device 1's primary context, retained and made current on another thread
// through calls safepin never sees (the driver's own functions), with a
// kernel on that thread's per-thread stream: the ordered unregister of a
// range of device 0's context returns only once that kernel has run.
TEST_F(Contexts, OrderedUnregisterWaitsForAPrimaryContextSafepinNeverSaw)
{
    Gate g;
    std::atomic<int> launched{0};
    std::thread worker([&] {
        CUcontext c1 = nullptr;
        ASSERT_EQ(cuDevicePrimaryCtxRetain(&c1, dev1), CUDA_SUCCESS);
        ASSERT_EQ(cuCtxSetCurrent(c1), CUDA_SUCCESS);
        EXPECT_EQ(simcudaLaunchKernel(CU_STREAM_PER_THREAD, k_gate, &g), CUDA_SUCCESS);
        launched = 1;
        EXPECT_EQ(cuStreamSynchronize(CU_STREAM_PER_THREAD), CUDA_SUCCESS);
        EXPECT_EQ(cuCtxSetCurrent(nullptr), CUDA_SUCCESS);
        EXPECT_EQ(cuDevicePrimaryCtxRelease_v2(dev1), CUDA_SUCCESS);
    });
    while (!launched.load())
        usleep(1000);
    // Opens the gate later: an unregister that did not wait returns first.
    std::thread opener([&] {
        usleep(300 * 1000);
        g.open = 1;
    });
    EXPECT_EQ(sp_cu_host_unregister(p), SP_CUDA_SUCCESS);
    EXPECT_EQ(g.ran.load(), 1) << "the ordered unregister returned before device 1's kernel ran";
    opener.join();
    worker.join();
    EXPECT_EQ(sp_reaper_drain(10000), 0u);
    EXPECT_FALSE(driver_has(p));
}

// A context the program created on another thread (cuCtxCreate, as its
// hook runs it), device 1's primary context inactive, a kernel on its
// legacy stream: the release is held while it runs (the reaper never
// enters the real unregister, which would hold the driver lock behind it),
// and safepin never activates device 1's primary context.
TEST_F(Contexts, ReleaseIsHeldWhileACreatedContextsLegacyStreamIsBusy)
{
    ASSERT_EQ(sp_options_parse("unregister=async"), 0);
    ASSERT_FALSE(primary_active(dev1));
    Gate g;
    std::atomic<int> launched{0};
    CUcontext c1 = nullptr;
    std::thread worker([&] {
        ASSERT_EQ(sp_cu_ctx_create(sp_cu.cuCtxCreate_v2, (sp_CUcontext *)&c1, 0, dev1),
                  SP_CUDA_SUCCESS);
        EXPECT_EQ(simcudaLaunchKernel(CU_STREAM_LEGACY, k_gate, &g), CUDA_SUCCESS);
        launched = 1;
    });
    worker.join();
    ASSERT_EQ(launched.load(), 1);
    EXPECT_EQ(sp_cu_host_unregister(p), SP_CUDA_SUCCESS);
    for (int i = 0; i < 200; i++) {
        ASSERT_FALSE(lock_held()) << "the real unregister ran while device 1's kernel ran";
        ASSERT_EQ(g.ran.load(), 0);
        usleep(1000);
    }
    EXPECT_TRUE(driver_has(p));
    g.open = 1;
    EXPECT_EQ(sp_reaper_drain(10000), 0u);
    EXPECT_EQ(g.ran.load(), 1);
    EXPECT_FALSE(driver_has(p));
    EXPECT_FALSE(primary_active(dev1)) << "safepin activated a primary context";
    EXPECT_EQ(sp_cu_ctx_destroy(sp_cu.cuCtxDestroy_v2, c1), SP_CUDA_SUCCESS);
    ASSERT_EQ(cuCtxSetCurrent(ctx0), CUDA_SUCCESS);
}

} // namespace
