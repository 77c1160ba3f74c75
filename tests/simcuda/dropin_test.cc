// dropin_test.cc - simcuda as a drop-in CUDA driver (issue 23, item 1):
// every entry point of the CUDA 13 driver resolves, the unmodelled ones
// answer CUDA_ERROR_NOT_SUPPORTED (also through cuGetProcAddress), and the
// modelled calls programs link answer as a driver does.
#include <dlfcn.h>
#include <string.h>

#include "sc_common.h"

// Source: simcuda/unmodelled.inc, generated from the names a CUDA 13
// libcuda.so exports (scripts/gen-simcuda-stubs).
static const char *const unmodelled[] = {
#define SC_UNMODELLED(name) #name,
#include "unmodelled.inc"
#undef SC_UNMODELLED
};

TEST(SimcudaDropIn, EveryDriverEntryPointResolvesAndUnmodelledOnesAreNotSupported)
{
    sc_ctx();
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    ASSERT_NE(h, nullptr);
    size_t n = sizeof unmodelled / sizeof unmodelled[0];
    EXPECT_GT(n, 300u);
    for (size_t i = 0; i < n; i++) {
        auto f = (CUresult(*)(void))dlsym(h, unmodelled[i]);
        ASSERT_NE(f, nullptr) << unmodelled[i];
    }
    // One called: arguments untouched, the answer 801.
    auto arr = (CUresult(*)(void *, void *))dlsym(h, "cuArrayCreate_v2");
    ASSERT_NE(arr, nullptr);
    EXPECT_EQ(arr(nullptr, nullptr), CUDA_ERROR_NOT_SUPPORTED);
    void *fn = nullptr;
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    EXPECT_EQ(cuGetProcAddress_v2("cuArrayCreate", &fn, 13000, 0, &st), CUDA_SUCCESS);
    EXPECT_EQ(st, CU_GET_PROC_ADDRESS_SUCCESS);
    EXPECT_EQ(fn, dlsym(h, "cuArrayCreate_v2"));
    EXPECT_EQ(cuGetProcAddress_v2("cuNoSuchThing", &fn, 13000, 0, &st), CUDA_ERROR_NOT_FOUND);
    dlclose(h);
}

static const char *kPtx = ".version 8.0\n.target sm_90\n.address_size 64\n"
                          ".visible .entry k(\n .param .u64 k_p0,\n .param .u32 k_p1\n)\n{\n ret;\n}\n";

// A kernel simcuda cannot execute is an opaque device operation: in stream
// order, delayed like every operation, touching no host memory.
TEST(SimcudaDropIn, ModulesFunctionsAndOpaqueLaunches)
{
    sc_ctx();
    CUmodule m;
    CUfunction f;
    EXPECT_EQ(cuModuleLoadData(&m, "not an image"), CUDA_ERROR_INVALID_IMAGE);
    ASSERT_EQ(cuModuleLoadData(&m, kPtx), CUDA_SUCCESS);
    EXPECT_EQ(cuModuleGetFunction(&f, m, "nope"), CUDA_ERROR_NOT_FOUND);
    ASSERT_EQ(cuModuleGetFunction(&f, m, "k"), CUDA_SUCCESS);
    int regs = 0;
    EXPECT_EQ(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f), CUDA_SUCCESS);
    EXPECT_EQ(regs, 1024);
    CUstream s;
    ASSERT_EQ(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    Gate g;
    ASSERT_EQ(simcudaLaunchKernel(s, k_gate, &g), CUDA_SUCCESS);
    CUdeviceptr p = 0;
    unsigned n = 1;
    void *args[] = { &p, &n };
    EXPECT_EQ(cuLaunchKernel(f, 0, 1, 1, 1, 1, 1, 0, s, args, nullptr), CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(cuLaunchKernel(f, 1, 1, 1, 2048, 1, 1, 0, s, args, nullptr), CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, nullptr, nullptr), CUDA_ERROR_INVALID_VALUE);
    ASSERT_EQ(cuLaunchKernel(f, 4, 1, 1, 128, 1, 1, 0, s, args, nullptr), CUDA_SUCCESS);
    CUlaunchConfig c = { 1, 1, 1, 32, 1, 1, 0, s, nullptr, 0 };
    ASSERT_EQ(cuLaunchKernelEx(&c, f, args, nullptr), CUDA_SUCCESS);
    // In stream order: the launches wait behind the gate.
    EXPECT_EQ(cuStreamQuery(s), CUDA_ERROR_NOT_READY);
    g.open = 1;
    EXPECT_EQ(cuStreamSynchronize(s), CUDA_SUCCESS);
    EXPECT_EQ(cuModuleUnload(m), CUDA_SUCCESS);
    EXPECT_EQ(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, args, nullptr), CUDA_ERROR_INVALID_HANDLE);
    EXPECT_EQ(cuStreamDestroy_v2(s), CUDA_SUCCESS);
}

TEST(SimcudaDropIn, CopiesMemsetsEventsStreamsDevicesAndContexts)
{
    sc_ctx();
    CUdeviceptr d;
    ASSERT_EQ(cuMemAlloc_v2(&d, 64), CUDA_SUCCESS);
    size_t fr = 0, tot = 0;
    ASSERT_EQ(cuMemGetInfo_v2(&fr, &tot), CUDA_SUCCESS);
    EXPECT_LE(fr + 64, tot);
    unsigned short h16[8];
    ASSERT_EQ(cuMemsetD16_v2(d, 0xabcd, 8), CUDA_SUCCESS);
    ASSERT_EQ(cuMemcpyDtoH_v2(h16, d, sizeof h16), CUDA_SUCCESS);
    EXPECT_EQ(h16[7], 0xabcd);
    unsigned char h8[16] = { 0 };
    ASSERT_EQ(cuMemsetD8_v2(d, 7, 16), CUDA_SUCCESS);
    ASSERT_EQ(cuMemcpyDtoH_v2(h8, d, 16), CUDA_SUCCESS);
    EXPECT_EQ(h8[15], 7);
    unsigned int h32[4] = { 1, 2, 3, 4 };
    ASSERT_EQ(cuMemcpyHtoD_v2(d, h32, sizeof h32), CUDA_SUCCESS);
    ASSERT_EQ(cuMemcpyDtoD_v2(d + 16, d, 16), CUDA_SUCCESS);
    unsigned int back[8] = { 0 };
    ASSERT_EQ(cuMemcpyDtoH_v2(back, d, sizeof back), CUDA_SUCCESS);
    EXPECT_EQ(back[6], 3u);

    CUstream a, b;
    ASSERT_EQ(cuStreamCreateWithPriority(&a, CU_STREAM_NON_BLOCKING, -3), CUDA_SUCCESS);
    ASSERT_EQ(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    unsigned fl = 9;
    int prio = 9;
    EXPECT_EQ(cuStreamGetFlags(a, &fl), CUDA_SUCCESS);
    EXPECT_EQ(fl, (unsigned)CU_STREAM_NON_BLOCKING);
    EXPECT_EQ(cuStreamGetPriority(a, &prio), CUDA_SUCCESS);
    EXPECT_EQ(prio, -3);
    // b waits for a's event: b's write lands after a's gate opens.
    CUevent e0, e1;
    ASSERT_EQ(cuEventCreate(&e0, CU_EVENT_DEFAULT), CUDA_SUCCESS);
    ASSERT_EQ(cuEventCreate(&e1, CU_EVENT_DEFAULT), CUDA_SUCCESS);
    Gate g;
    ASSERT_EQ(cuEventRecord(e0, a), CUDA_SUCCESS);
    ASSERT_EQ(simcudaLaunchKernel(a, k_gate, &g), CUDA_SUCCESS);
    ASSERT_EQ(cuEventRecord(e1, a), CUDA_SUCCESS);
    ASSERT_EQ(cuStreamWaitEvent(b, e1, 0), CUDA_SUCCESS);
    ASSERT_EQ(cuMemsetD32Async(d, 5, 1, b), CUDA_SUCCESS);
    float ms = 0;
    EXPECT_EQ(cuEventElapsedTime(&ms, e0, e1), CUDA_ERROR_NOT_READY);
    EXPECT_EQ(cuStreamQuery(b), CUDA_ERROR_NOT_READY);
    g.open = 1;
    ASSERT_EQ(cuStreamSynchronize(b), CUDA_SUCCESS);
    EXPECT_EQ(cuEventElapsedTime(&ms, e0, e1), CUDA_SUCCESS);
    EXPECT_GE(ms, 0.0f);

    char name[64];
    int v = 0, major = 0, minor = 0;
    EXPECT_EQ(cuDeviceGetName(name, sizeof name, 0), CUDA_SUCCESS);
    EXPECT_NE(strstr(name, "H200"), nullptr);
    EXPECT_EQ(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0), CUDA_SUCCESS);
    EXPECT_EQ(v, 32);
    EXPECT_EQ(cuDeviceComputeCapability(&major, &minor, 0), CUDA_SUCCESS);
    EXPECT_EQ(major, 9);
    EXPECT_EQ(cuDeviceGetAttribute(&v, 0, 0), CUDA_ERROR_INVALID_VALUE);

    CUcontext mine, cur, popped;
    ASSERT_EQ(cuCtxCreate_v2(&mine, 0, 0), CUDA_SUCCESS); // current now
    ASSERT_EQ(cuCtxPopCurrent_v2(&popped), CUDA_SUCCESS);
    EXPECT_EQ(popped, mine);
    ASSERT_EQ(cuCtxPushCurrent_v2(mine), CUDA_SUCCESS);
    ASSERT_EQ(cuCtxGetCurrent(&cur), CUDA_SUCCESS);
    EXPECT_EQ(cur, mine);
    ASSERT_EQ(cuCtxPopCurrent_v2(&popped), CUDA_SUCCESS);
    EXPECT_EQ(cuCtxDestroy_v2(mine), CUDA_SUCCESS);

    EXPECT_EQ(cuEventDestroy_v2(e0), CUDA_SUCCESS);
    EXPECT_EQ(cuEventDestroy_v2(e1), CUDA_SUCCESS);
    EXPECT_EQ(cuStreamDestroy_v2(a), CUDA_SUCCESS);
    EXPECT_EQ(cuStreamDestroy_v2(b), CUDA_SUCCESS);
    EXPECT_EQ(cuMemFree_v2(d), CUDA_SUCCESS);
}
