// dropin_test.cc - simhip as a drop-in for what programs and AMD's tests
// link (issue 23, item 2): every hipError_t function of Debian's ROCm 5.2.3
// libamdhip64.so.5 resolves, the unmodelled ones answer hipErrorNotSupported,
// and the calls hip-tests need answer as the runtime does.
#include <dlfcn.h>
#include <string.h>

#include "sim_common.h"

// Source: simhip/unmodelled.inc, generated from Debian's library and header
// (scripts/gen-simhip-exports).
static const char *const unmodelled[] = {
#define SH_UNMODELLED(name) #name,
#include "unmodelled.inc"
#undef SH_UNMODELLED
};

TEST(SimhipDropIn, EveryFunctionResolvesAndUnmodelledOnesAreNotSupported)
{
    void *h = dlopen("libamdhip64.so.5", RTLD_NOW | RTLD_NOLOAD);
    ASSERT_NE(h, nullptr);
    size_t n = sizeof unmodelled / sizeof unmodelled[0];
    EXPECT_GT(n, 200u);
    for (size_t i = 0; i < n; i++)
        ASSERT_NE(dlvsym(h, unmodelled[i], "hip_4.2") ? (void *)1 : dlsym(h, unmodelled[i]),
                  nullptr)
            << unmodelled[i];
    auto f = (hipError_t(*)(void *))dlsym(h, "hipModuleUnload");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f(nullptr), hipErrorNotSupported);
    EXPECT_EQ(hipGetLastError(), hipErrorNotSupported);
    dlclose(h);
}

TEST(SimhipDropIn, DevicePropertiesAttributesAndMemoryInfo)
{
    hipDevice_t dev = -1;
    ASSERT_EQ(hipDeviceGet(&dev, 0), hipSuccess);
    EXPECT_EQ(dev, 0);
    EXPECT_EQ(hipDeviceGet(&dev, 99), hipErrorInvalidDevice);
    hipDeviceProp_t p;
    ASSERT_EQ(hipGetDeviceProperties(&p, 0), hipSuccess);
    EXPECT_EQ(p.warpSize, 64);
    EXPECT_EQ(p.canMapHostMemory, 1);
    int v = 0;
    ASSERT_EQ(hipDeviceGetAttribute(&v, hipDeviceAttributeMultiprocessorCount, 0), hipSuccess);
    EXPECT_EQ(v, p.multiProcessorCount);
    int can = 7;
    EXPECT_EQ(hipDeviceCanAccessPeer(&can, 0, 0), hipSuccess);
    EXPECT_EQ(can, 0);
    size_t fr0, tot, fr1;
    ASSERT_EQ(hipMemGetInfo(&fr0, &tot), hipSuccess);
    void *d = nullptr;
    ASSERT_EQ(hipMalloc(&d, 1 << 20), hipSuccess);
    ASSERT_EQ(hipMemGetInfo(&fr1, &tot), hipSuccess);
    EXPECT_EQ(fr0 - fr1, (size_t)1 << 20);
    unsigned mt = 99;
    EXPECT_EQ(hipPointerGetAttribute(&mt, HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, d), hipSuccess);
    EXPECT_EQ(mt, (unsigned)hipMemoryTypeDevice);
    int local = 0;
    EXPECT_EQ(hipPointerGetAttribute(&mt, HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, &local),
              hipErrorInvalidValue);
    EXPECT_EQ(hipFree(d), hipSuccess);
}

TEST(SimhipDropIn, ManagedPitchedAndD16)
{
    void *m = nullptr;
    ASSERT_EQ(hipMallocManaged(&m, 4096, hipMemAttachGlobal), hipSuccess);
    EXPECT_EQ(hipMemAdvise(m, 4096, hipMemAdviseSetReadMostly, 0), hipSuccess);
    int managed = 0;
    EXPECT_EQ(hipPointerGetAttribute(&managed, HIP_POINTER_ATTRIBUTE_IS_MANAGED, m), hipSuccess);
    EXPECT_EQ(managed, 1);
    ASSERT_EQ(hipMemsetD16Async(m, 0x1234, 4, 0), hipSuccess);
    ASSERT_EQ(hipStreamSynchronize(0), hipSuccess);
    EXPECT_EQ(((unsigned short *)m)[3], 0x1234); // the host reads managed memory
    EXPECT_EQ(hipFree(m), hipSuccess);
    void *pp = nullptr;
    size_t pitch = 0;
    ASSERT_EQ(hipMallocPitch(&pp, &pitch, 100, 3), hipSuccess);
    EXPECT_EQ(pitch % 256, 0u);
    EXPECT_GE(pitch, 100u);
    EXPECT_EQ(hipFree(pp), hipSuccess);
}

static void host_node(void *a)
{
    ((std::atomic<int> *)a)->fetch_add(1);
}

// A graph built node by node runs its nodes in order on every launch.
TEST(SimhipDropIn, GraphsBuiltNodeByNode)
{
    hipGraph_t g;
    ASSERT_EQ(hipGraphCreate(&g, 0), hipSuccess);
    int *h = nullptr;
    ASSERT_EQ(hipHostMalloc((void **)&h, 64, 0), hipSuccess);
    void *d = nullptr;
    ASSERT_EQ(hipMalloc(&d, 64), hipSuccess);
    hipMemsetParams ms = {};
    ms.dst = d;
    ms.elementSize = 4;
    ms.height = 1;
    ms.value = 42;
    ms.width = 16;
    hipGraphNode_t n1, n2, n3;
    ASSERT_EQ(hipGraphAddMemsetNode(&n1, g, nullptr, 0, &ms), hipSuccess);
    ASSERT_EQ(hipGraphAddMemcpyNode1D(&n2, g, &n1, 1, h, d, 64, hipMemcpyDeviceToHost), hipSuccess);
    std::atomic<int> runs{0};
    hipHostNodeParams hp = { host_node, &runs };
    ASSERT_EQ(hipGraphAddHostNode(&n3, g, &n2, 1, &hp), hipSuccess);
    EXPECT_EQ(hipGraphAddDependencies(g, &n3, &n1, 1), hipErrorInvalidValue);
    hipGraphExec_t x;
    ASSERT_EQ(hipGraphInstantiate(&x, g, nullptr, nullptr, 0), hipSuccess);
    ASSERT_EQ(hipGraphLaunch(x, 0), hipSuccess);
    ASSERT_EQ(hipGraphLaunch(x, 0), hipSuccess);
    ASSERT_EQ(hipStreamSynchronize(0), hipSuccess);
    EXPECT_EQ(h[15], 42);
    EXPECT_EQ(runs.load(), 2);
    EXPECT_EQ(hipGraphExecDestroy(x), hipSuccess);
    EXPECT_EQ(hipGraphDestroy(g), hipSuccess);
    EXPECT_EQ(hipFree(d), hipSuccess);
    EXPECT_EQ(hipHostFree(h), hipSuccess);
}

TEST(SimhipDropIn, StreamFlagsAndPriority)
{
    hipStream_t s;
    ASSERT_EQ(hipStreamCreateWithPriority(&s, hipStreamNonBlocking, -1), hipSuccess);
    unsigned f = 9;
    int prio = 9;
    EXPECT_EQ(hipStreamGetFlags(s, &f), hipSuccess);
    EXPECT_EQ(f, (unsigned)hipStreamNonBlocking);
    EXPECT_EQ(hipStreamGetPriority(s, &prio), hipSuccess);
    EXPECT_EQ(prio, -1);
    EXPECT_EQ(hipStreamDestroy(s), hipSuccess);
}
