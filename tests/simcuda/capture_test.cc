// Capture conflicts (900/901, relaxed mode), 906 on the legacy stream, the
// legacy stream's ordering, and graphs.
#include <thread>

#include "sc_common.h"

static CUcontext current()
{
    CUcontext c = nullptr;
    cuCtxGetCurrent(&c);
    return c;
}

TEST(SimcudaCapture, AnotherThreadsRegisterOrUnregisterKillsAGlobalCapture)
{
    sc_ctx();
    char *p = map_pages(2);
    ASSERT_EQ(cuMemHostRegister_v2(p, page(), 0), CUDA_SUCCESS);
    CUstream s;
    ASSERT_EQ(cuStreamCreate(&s, 0), CUDA_SUCCESS);
    ASSERT_EQ(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
    CUcontext ctx = current();
    CUresult ru = CUDA_SUCCESS, rr = CUDA_SUCCESS;
    std::thread t([&] {
        cuCtxSetCurrent(ctx);
        ru = cuMemHostUnregister(p);
        rr = cuMemHostRegister_v2(p + page(), page(), 0);
    });
    t.join();
    EXPECT_EQ(ru, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    EXPECT_EQ(rr, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CUstreamCaptureStatus st;
    EXPECT_EQ(cuStreamIsCapturing(s, &st), CUDA_SUCCESS);
    EXPECT_EQ(st, CU_STREAM_CAPTURE_STATUS_INVALIDATED);
    CUgraph g = nullptr;
    EXPECT_EQ(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    // The refused unregister changed nothing.
    EXPECT_EQ(cuMemHostUnregister(p), CUDA_SUCCESS);
    EXPECT_EQ(cuStreamDestroy_v2(s), CUDA_SUCCESS);
    munmap(p, 2 * page());
}

TEST(SimcudaCapture, RelaxedModeOnTheCallingThreadAvoidsIt)
{
    sc_ctx();
    char *p = map_pages(1);
    ASSERT_EQ(cuMemHostRegister_v2(p, page(), 0), CUDA_SUCCESS);
    CUstream s;
    ASSERT_EQ(cuStreamCreate(&s, 0), CUDA_SUCCESS);
    ASSERT_EQ(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
    CUcontext ctx = current();
    CUresult ru = CUDA_ERROR_UNKNOWN;
    std::thread t([&] {
        cuCtxSetCurrent(ctx);
        CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;
        cuThreadExchangeStreamCaptureMode(&m);
        ru = cuMemHostUnregister(p);
    });
    t.join();
    EXPECT_EQ(ru, CUDA_SUCCESS);
    CUgraph g = nullptr;
    EXPECT_EQ(cuStreamEndCapture(s, &g), CUDA_SUCCESS);
    EXPECT_EQ(cuGraphDestroy(g), CUDA_SUCCESS);
    EXPECT_EQ(cuStreamDestroy_v2(s), CUDA_SUCCESS);
    munmap(p, page());
}

TEST(SimcudaCapture, LegacyStreamMarkerIs906WhileABlockingStreamCaptures)
{
    sc_ctx();
    CUstream s, nb;
    ASSERT_EQ(cuStreamCreate(&s, CU_STREAM_DEFAULT), CUDA_SUCCESS);
    ASSERT_EQ(cuStreamCreate(&nb, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    CUevent ev;
    ASSERT_EQ(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
    // A non-blocking stream's capture does not involve the legacy stream.
    ASSERT_EQ(cuStreamBeginCapture_v2(nb, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
    EXPECT_EQ(cuEventRecord(ev, CU_STREAM_LEGACY), CUDA_SUCCESS);
    CUgraph g0;
    ASSERT_EQ(cuStreamEndCapture(nb, &g0), CUDA_SUCCESS);
    cuGraphDestroy(g0);

    ASSERT_EQ(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
    EXPECT_EQ(cuEventRecord(ev, CU_STREAM_LEGACY), CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
    EXPECT_EQ(cuEventRecord(ev, nullptr), CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
    CUstreamCaptureStatus st;
    EXPECT_EQ(cuStreamIsCapturing(CU_STREAM_LEGACY, &st), CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
    // The per-thread stream still works, also as the NULL of _ptsz forms.
    EXPECT_EQ(cuEventRecord(ev, CU_STREAM_PER_THREAD), CUDA_SUCCESS);
    EXPECT_EQ(cuEventRecord_ptsz(ev, nullptr), CUDA_SUCCESS);
    // The refused marker invalidated the global capture (as on the H200).
    CUgraph g = nullptr;
    EXPECT_EQ(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    if (g)
        cuGraphDestroy(g);
    EXPECT_EQ(cuEventSynchronize(ev), CUDA_SUCCESS);
    EXPECT_EQ(cuEventDestroy_v2(ev), CUDA_SUCCESS);
    EXPECT_EQ(cuStreamDestroy_v2(s), CUDA_SUCCESS);
    EXPECT_EQ(cuStreamDestroy_v2(nb), CUDA_SUCCESS);
}

TEST(SimcudaOrdering, LegacyMarkerWaitsForBlockingAndPerThreadNeverNonBlocking)
{
    sc_ctx();
    CUstream blocking, nonblocking;
    ASSERT_EQ(cuStreamCreate(&blocking, CU_STREAM_DEFAULT), CUDA_SUCCESS);
    ASSERT_EQ(cuStreamCreate(&nonblocking, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    Gate gb, gp, gn;
    ASSERT_EQ(simcudaLaunchKernel(blocking, k_gate, &gb), CUDA_SUCCESS);
    ASSERT_EQ(simcudaLaunchKernel(CU_STREAM_PER_THREAD, k_gate, &gp), CUDA_SUCCESS);
    ASSERT_EQ(simcudaLaunchKernel(nonblocking, k_gate, &gn), CUDA_SUCCESS);
    CUevent ev;
    ASSERT_EQ(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
    ASSERT_EQ(cuEventRecord(ev, CU_STREAM_LEGACY), CUDA_SUCCESS);
    EXPECT_EQ(cuEventQuery(ev), CUDA_ERROR_NOT_READY);
    gb.open = 1;
    EXPECT_EQ(cuEventQuery(ev), CUDA_ERROR_NOT_READY) << "per-thread stream still busy";
    gp.open = 1;
    // Completes while the non-blocking stream is still held.
    EXPECT_TRUE(wait_until([&] { return cuEventQuery(ev) == CUDA_SUCCESS; }));
    EXPECT_EQ(cuStreamQuery(nonblocking), CUDA_ERROR_NOT_READY);
    gn.open = 1;
    EXPECT_EQ(cuStreamSynchronize(nonblocking), CUDA_SUCCESS);
    EXPECT_EQ(cuEventDestroy_v2(ev), CUDA_SUCCESS);
    EXPECT_EQ(cuStreamDestroy_v2(blocking), CUDA_SUCCESS);
    EXPECT_EQ(cuStreamDestroy_v2(nonblocking), CUDA_SUCCESS);
}

static void h_count(void *a)
{
    ++*(std::atomic<int> *)a;
}

TEST(SimcudaCapture, CapturedHostFunctionsReplayOnEveryGraphLaunch)
{
    sc_ctx();
    CUstream s;
    ASSERT_EQ(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    std::atomic<int> n{0};
    ASSERT_EQ(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), CUDA_SUCCESS);
    ASSERT_EQ(cuLaunchHostFunc(s, h_count, &n), CUDA_SUCCESS);
    CUgraph g;
    ASSERT_EQ(cuStreamEndCapture(s, &g), CUDA_SUCCESS);
    EXPECT_EQ(n.load(), 0);
    CUgraphExec x;
    ASSERT_EQ(cuGraphInstantiateWithFlags(&x, g, 0), CUDA_SUCCESS);
    ASSERT_EQ(cuGraphLaunch(x, s), CUDA_SUCCESS);
    ASSERT_EQ(cuGraphLaunch(x, s), CUDA_SUCCESS);
    ASSERT_EQ(cuStreamSynchronize(s), CUDA_SUCCESS);
    EXPECT_EQ(n.load(), 2);
    EXPECT_EQ(cuGraphExecDestroy(x), CUDA_SUCCESS);
    EXPECT_EQ(cuGraphDestroy(g), CUDA_SUCCESS);
    EXPECT_EQ(cuStreamDestroy_v2(s), CUDA_SUCCESS);
}
