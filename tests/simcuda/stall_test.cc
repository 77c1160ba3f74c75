// The device-wide wait and the driver lock: cuMemHostUnregister,
// cuMemFree_v2 and cuMemFreeHost wait for every stream of the device (one
// the range never used too) and hold a lock meanwhile that stalls another
// thread's launch; cuCtxSynchronize stalls nobody. No timing asserts: a
// gate kernel holds an unrelated stream, and the test hook says when the
// lock is held and when a call waits for it.
#include <thread>

#include "sc_common.h"

static void stall_case(const std::function<CUresult()> &release_call)
{
    CUstream busy, other;
    ASSERT_EQ(cuStreamCreate(&busy, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    ASSERT_EQ(cuStreamCreate(&other, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    Gate g;
    ASSERT_EQ(simcudaLaunchKernel(busy, k_gate, &g), CUDA_SUCCESS);
    ASSERT_TRUE(wait_until([&] { return g.entered.load() == 1; }));

    std::atomic<int> released{0}, launched{0};
    std::atomic<CUresult> rc{CUDA_ERROR_UNKNOWN};
    CUcontext ctx;
    ASSERT_EQ(cuCtxGetCurrent(&ctx), CUDA_SUCCESS);
    std::thread a([&] {
        cuCtxSetCurrent(ctx);
        rc = release_call();
        released = 1;
    });
    ASSERT_TRUE(wait_until([] { return lock_held() == 1; })) << "the call took no driver lock";
    int value = 0;
    int *pinned = nullptr;
    ASSERT_EQ(cuMemHostAlloc((void **)&pinned, sizeof(int), 0), CUDA_SUCCESS);
    WriteInt w = { pinned, 1 };
    (void)value;
    std::thread b([&] {
        cuCtxSetCurrent(ctx);
        simcudaLaunchKernel(other, k_write, &w);
        launched = 1;
    });
    ASSERT_TRUE(wait_until([] { return lock_waiting() >= 1; })) << "the launch did not wait";
    // The gate is closed: the call cannot be done, and the launch waits.
    EXPECT_EQ(released.load(), 0);
    EXPECT_EQ(launched.load(), 0);
    g.open = 1;
    a.join();
    b.join();
    EXPECT_EQ(rc.load(), CUDA_SUCCESS);
    EXPECT_EQ(launched.load(), 1);
    ASSERT_EQ(cuStreamSynchronize(other), CUDA_SUCCESS);
    EXPECT_EQ(pinned[0], 1);
    EXPECT_EQ(cuMemFreeHost(pinned), CUDA_SUCCESS);
    EXPECT_EQ(cuStreamDestroy_v2(busy), CUDA_SUCCESS);
    EXPECT_EQ(cuStreamDestroy_v2(other), CUDA_SUCCESS);
}

TEST(SimcudaStall, UnregisterWaitsForAnUnrelatedStreamAndStallsOtherLaunches)
{
    sc_ctx();
    char *p = map_pages(1);
    ASSERT_EQ(cuMemHostRegister_v2(p, page(), 0), CUDA_SUCCESS);
    stall_case([&] { return cuMemHostUnregister(p); });
    EXPECT_EQ(cuMemHostUnregister(p), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    munmap(p, page());
}

TEST(SimcudaStall, MemFreeWaitsTheSameWay)
{
    sc_ctx();
    CUdeviceptr d;
    ASSERT_EQ(cuMemAlloc_v2(&d, 256), CUDA_SUCCESS);
    stall_case([&] { return cuMemFree_v2(d); });
}

TEST(SimcudaStall, MemFreeHostWaitsTheSameWay)
{
    sc_ctx();
    void *h;
    ASSERT_EQ(cuMemHostAlloc(&h, 256, 0), CUDA_SUCCESS);
    stall_case([&] { return cuMemFreeHost(h); });
}

TEST(SimcudaStall, CtxSynchronizeStallsNoOtherThread)
{
    sc_ctx();
    CUstream busy, other;
    ASSERT_EQ(cuStreamCreate(&busy, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    ASSERT_EQ(cuStreamCreate(&other, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    Gate g;
    ASSERT_EQ(simcudaLaunchKernel(busy, k_gate, &g), CUDA_SUCCESS);
    CUcontext ctx;
    ASSERT_EQ(cuCtxGetCurrent(&ctx), CUDA_SUCCESS);
    std::atomic<int> synced{0};
    std::thread a([&] {
        cuCtxSetCurrent(ctx);
        cuCtxSynchronize();
        synced = 1;
    });
    Gate g2;
    g2.open = 1;
    // The launch returns while the gate is closed and the sync waits.
    EXPECT_EQ(simcudaLaunchKernel(other, k_gate, &g2), CUDA_SUCCESS);
    EXPECT_EQ(lock_held(), 0);
    EXPECT_EQ(synced.load(), 0);
    g.open = 1;
    a.join();
    EXPECT_EQ(synced.load(), 1);
    EXPECT_EQ(cuStreamDestroy_v2(busy), CUDA_SUCCESS);
    EXPECT_EQ(cuStreamDestroy_v2(other), CUDA_SUCCESS);
}
