// Memory: allocations, registration (cost, identity mapping, double
// register), pointer attributes (both personalities), copies and memsets,
// pageable staging, device faults, and the runtime aborts.
#include <pthread.h>

#include "sim_common.h"

#define MEMOBJ_RE "simhip: runtime abort: Memobj map does not have ptr: 0x[0-9a-f]+"
#define RACE_RE "simhip: runtime abort: hipPointerGetAttributes raced hipHostUnregister on 0x[0-9a-f]+"

TEST(Register, FaultsInPagesAndMapsIdentity)
{
    const size_t n = 64;
    char *p = map_pages(n);
    ASSERT_TRUE(p);
    std::vector<unsigned char> vec(n);
    ASSERT_EQ(mincore(p, n * page(), vec.data()), 0);
    size_t resident = 0;
    for (unsigned char v : vec)
        resident += v & 1;
    EXPECT_EQ(resident, 0u); // untouched anonymous pages
    ASSERT_EQ(hipHostRegister(p, n * page(), hipHostRegisterMapped), hipSuccess);
    ASSERT_EQ(mincore(p, n * page(), vec.data()), 0);
    resident = 0;
    for (unsigned char v : vec)
        resident += v & 1;
    EXPECT_EQ(resident, n); // every page faulted in
    void *dev = nullptr;
    ASSERT_EQ(hipHostGetDevicePointer(&dev, p + 100, 0), hipSuccess);
    EXPECT_EQ(dev, (void *)(p + 100));
    unsigned flags = 0;
    ASSERT_EQ(hipHostGetFlags(&flags, p), hipSuccess);
    EXPECT_EQ(flags, (unsigned)hipHostRegisterMapped);
    ASSERT_EQ(hipHostUnregister(p), hipSuccess);
    EXPECT_EQ(hipHostGetDevicePointer(&dev, p, 0), hipErrorInvalidValue);
    EXPECT_EQ(hipHostGetFlags(&flags, p), hipErrorInvalidValue);
    munmap(p, n * page());
}

TEST(Register, BadArguments)
{
    char buf[64];
    EXPECT_EQ(hipHostRegister(nullptr, 64, 0), hipErrorInvalidValue);
    EXPECT_EQ(hipHostRegister(buf, 0, 0), hipErrorInvalidValue);
    EXPECT_EQ(hipHostUnregister(nullptr), hipErrorInvalidValue);
    EXPECT_EQ(hipHostUnregister(buf), hipErrorHostMemoryNotRegistered);
}

TEST(Register, SequentialSecondUnregisterIsNotRegistered)
{
    char *p = map_pages(1);
    ASSERT_EQ(hipHostRegister(p, page(), 0), hipSuccess);
    EXPECT_EQ(hipHostUnregister(p), hipSuccess);
    EXPECT_EQ(hipHostUnregister(p), hipErrorHostMemoryNotRegistered);
    munmap(p, page());
}

TEST(Register, DoubleRegisterKeepsOldSize)
{
    char *p = map_pages(2);
    ASSERT_EQ(hipHostRegister(p, page(), 0), hipSuccess);
    EXPECT_EQ(hipHostRegister(p, 2 * page(), 0), hipSuccess);
    EXPECT_EQ(hipHostRegister(p + page() - 8, 64, 0), hipSuccess); // overlapping
    void *dev;
    EXPECT_EQ(hipHostGetDevicePointer(&dev, p + page(), 0), hipErrorInvalidValue);
    ASSERT_EQ(hipHostUnregister(p), hipSuccess);
    EXPECT_EQ(hipHostUnregister(p), hipErrorHostMemoryNotRegistered);
    munmap(p, 2 * page());
}

static void k_write_at(void *a)
{
    int *p = (int *)a;
    int v = 42;
    simhipDeviceWrite(p, &v, sizeof v);
}

TEST(Fault, AccessPastOldSizeAfterDoubleRegister)
{
    char *p = map_pages(2);
    ASSERT_EQ(hipHostRegister(p, page(), 0), hipSuccess);
    ASSERT_EQ(hipHostRegister(p, 2 * page(), 0), hipSuccess);
    // Inside the old size: fine.
    ASSERT_EQ(simhipLaunchKernel(0, k_write_at, p + 16), hipSuccess);
    ASSERT_EQ(hipDeviceSynchronize(), hipSuccess);
    EXPECT_EQ(*(int *)(p + 16), 42);
    auto body = [&]() {
        (void)simhipLaunchKernel(0, k_write_at, p + page() + 16);
        (void)hipDeviceSynchronize();
    };
    EXPECT_DEATH(body(), FAULT_RE);
    EXPECT_EQ(hipHostUnregister(p), hipSuccess);
    munmap(p, 2 * page());
}

TEST(Fault, UnregisteredHostMemory)
{
    static int plain[16];
    auto body = [&]() {
        (void)simhipLaunchKernel(0, k_write_at, &plain[3]);
        (void)hipDeviceSynchronize();
    };
    EXPECT_DEATH(body(), FAULT_RE);
}

TEST(Fault, UnmappedRegisteredRangeFaultsWithoutCrashingSimhip)
{
    char *p = map_pages(4);
    ASSERT_EQ(hipHostRegister(p, 4 * page(), 0), hipSuccess);
    ASSERT_EQ(munmap(p + page(), page()), 0); // still "registered"
    auto body = [&]() {
        (void)hipMemsetAsync(p, 1, 4 * page(), 0);
        (void)hipDeviceSynchronize();
    };
    EXPECT_DEATH(body(), FAULT_RE);
    EXPECT_EQ(hipHostUnregister(p), hipSuccess);
    munmap(p, 4 * page());
}

TEST(Fault, MemsetOfUnregisteredAddress)
{
    char *p = map_pages(1);
    auto body = [&]() {
        (void)hipMemsetD32Async(p, 7, 4, 0);
        (void)hipDeviceSynchronize();
    };
    EXPECT_DEATH(body(), FAULT_RE);
    munmap(p, page());
}

TEST(Fault, AsyncCopyCheckedWhenItExecutesNotWhenEnqueued)
{
    // Registered at enqueue (so not staged), unregistered before it runs:
    // legacy's unregister does not wait for a non-blocking stream.
    auto body = [&]() {
        setenv("SIMHIP_PERSONALITY", "legacy", 1);
        char *p = map_pages(1);
        void *d = nullptr;
        (void)hipMalloc(&d, page());
        (void)hipHostRegister(p, page(), 0);
        hipStream_t nb;
        (void)hipStreamCreateWithFlags(&nb, hipStreamNonBlocking);
        SleepWrite w{100, (int *)d, 5};
        (void)simhipLaunchKernel(nb, k_sleep_write, &w);
        (void)hipMemcpyAsync(d, p, page(), hipMemcpyHostToDevice, nb);
        (void)hipHostUnregister(p);
        (void)hipStreamSynchronize(nb);
    };
    EXPECT_DEATH(body(), FAULT_RE);
}

TEST(Fault, UseAfterUnregisterOnNonBlockingStreamLegacy)
{
    auto body = [&]() {
        setenv("SIMHIP_PERSONALITY", "legacy", 1);
        PinnedInts m;
        hipStream_t nb;
        (void)hipStreamCreateWithFlags(&nb, hipStreamNonBlocking);
        SleepWrite w{100, m.p, 1};
        (void)simhipLaunchKernel(nb, k_sleep_write, &w);
        (void)hipHostUnregister(m.p); // waits for the null stream only
        m.p = nullptr;
        (void)hipStreamSynchronize(nb);
    };
    EXPECT_DEATH(body(), FAULT_RE);
}

TEST(Unregister, CurrentWaitsForEveryStreamSoNoFault)
{
    PinnedInts m;
    ASSERT_TRUE(m.p);
    hipStream_t nb;
    ASSERT_EQ(hipStreamCreateWithFlags(&nb, hipStreamNonBlocking), hipSuccess);
    SleepWrite w{100, m.p, 9};
    ASSERT_EQ(simhipLaunchKernel(nb, k_sleep_write, &w), hipSuccess);
    double t0 = now_ms();
    ASSERT_EQ(hipHostUnregister(m.p), hipSuccess);
    EXPECT_GE(now_ms() - t0, 80.0); // it synchronized the non-blocking stream
    EXPECT_EQ(m.p[0], 9);
    EXPECT_EQ(hipStreamQuery(nb), hipSuccess);
    ASSERT_EQ(hipHostRegister(m.p, m.n * sizeof(int), 0), hipSuccess); // for the destructor
    EXPECT_EQ(hipStreamDestroy(nb), hipSuccess);
}

TEST(Unregister, LegacyReturnsWithoutWaitingForNonBlockingStreams)
{
    IN_CHILD_WITH_ENV("SIMHIP_PERSONALITY", "legacy", {
        PinnedInts m;
        CHILD_CHECK(m.p);
        hipStream_t nb;
        CHILD_CHECK(hipStreamCreateWithFlags(&nb, hipStreamNonBlocking) == hipSuccess);
        OrderLog log;
        LogEntry e{&log, 1, 150};
        CHILD_CHECK(simhipLaunchKernel(nb, k_log, &e) == hipSuccess);
        double t0 = now_ms();
        CHILD_CHECK(hipHostUnregister(m.p) == hipSuccess);
        CHILD_CHECK(now_ms() - t0 < 100.0);
        CHILD_CHECK(hipStreamQuery(nb) == hipErrorNotReady);
        CHILD_CHECK(hipStreamSynchronize(nb) == hipSuccess);
        m.p = nullptr;
    });
}

// ---- runtime aborts ---------------------------------------------------------

TEST(RuntimeAbort, InteriorUnregister)
{
    char *p = map_pages(2);
    ASSERT_EQ(hipHostRegister(p, 2 * page(), 0), hipSuccess);
    EXPECT_DEATH((void)hipHostUnregister(p + 64), MEMOBJ_RE);
    EXPECT_EQ(hipHostUnregister(p), hipSuccess); // the parent's range is intact
    munmap(p, 2 * page());
}

TEST(RuntimeAbort, HipFreeOfRegisteredHostPointer)
{
    char *p = map_pages(1);
    ASSERT_EQ(hipHostRegister(p, page(), 0), hipSuccess);
    EXPECT_DEATH((void)hipFree(p), MEMOBJ_RE);
    EXPECT_DEATH((void)hipFree(p + 8), MEMOBJ_RE);
    EXPECT_EQ(hipHostUnregister(p), hipSuccess);
    munmap(p, page());
}

static void *unregister_thread(void *p)
{
    return (void *)(intptr_t)hipHostUnregister(p);
}

TEST(RuntimeAbort, ConcurrentDoubleUnregister)
{
    auto body = [&]() {
        char *p = map_pages(1);
        (void)hipHostRegister(p, page(), 0);
        hipStream_t nb;
        (void)hipStreamCreateWithFlags(&nb, hipStreamNonBlocking);
        LogEntry e{new OrderLog, 1, 200};
        (void)simhipLaunchKernel(nb, k_log, &e); // keeps unregister busy
        pthread_t t;
        pthread_create(&t, nullptr, unregister_thread, p);
        sleep_ms(50);
        (void)hipHostUnregister(p);
        pthread_join(t, nullptr);
    };
    EXPECT_DEATH(body(), MEMOBJ_RE);
}

struct Hammer {
    char *p;
    std::atomic<bool> stop{false};
};
static void *attr_hammer(void *a)
{
    Hammer *h = (Hammer *)a;
    hipPointerAttribute_t at;
    for (int i = 0; i < 3000 && !h->stop; i++)
        (void)hipPointerGetAttributes(&at, h->p);
    return nullptr;
}

TEST(RuntimeAbort, PointerAttributesRacingUnregister)
{
    auto body = [&]() {
        Hammer h;
        h.p = map_pages(1);
        pthread_t t;
        pthread_create(&t, nullptr, attr_hammer, &h);
        for (int i = 0; i < 3000; i++) {
            (void)hipHostRegister(h.p, page(), 0);
            (void)hipHostUnregister(h.p);
        }
        h.stop = true;
        pthread_join(t, nullptr);
    };
    EXPECT_DEATH(body(), RACE_RE);
}

TEST(RuntimeAbort, SequentialAttributesAndUnregisterAreFine)
{
    char *p = map_pages(1);
    hipPointerAttribute_t at;
    for (int i = 0; i < 50; i++) {
        ASSERT_EQ(hipHostRegister(p, page(), 0), hipSuccess);
        ASSERT_EQ(hipPointerGetAttributes(&at, p), hipSuccess);
        ASSERT_EQ(hipHostUnregister(p), hipSuccess);
    }
    munmap(p, page());
}

// ---- pointer attributes -----------------------------------------------------

TEST(PointerAttributes, RegisteredDeviceAndHostMalloc)
{
    char *p = map_pages(2);
    ASSERT_EQ(hipHostRegister(p, 2 * page(), hipHostRegisterPortable), hipSuccess);
    hipPointerAttribute_t a;
    ASSERT_EQ(hipPointerGetAttributes(&a, p + 10), hipSuccess);
    EXPECT_EQ(a.memoryType, hipMemoryTypeHost);
    EXPECT_EQ(a.device, 0);
    EXPECT_EQ(a.hostPointer, (void *)(p + 10));
    EXPECT_EQ(a.devicePointer, (void *)(p + 10));
    EXPECT_EQ(a.allocationFlags, (unsigned)hipHostRegisterPortable);
    ASSERT_EQ(hipHostUnregister(p), hipSuccess);

    void *d = nullptr;
    ASSERT_EQ(hipMalloc(&d, 4096), hipSuccess);
    ASSERT_EQ(hipPointerGetAttributes(&a, d), hipSuccess);
    EXPECT_EQ(a.memoryType, hipMemoryTypeDevice);
    EXPECT_EQ(a.devicePointer, d);
    EXPECT_EQ(hipFree(d), hipSuccess);

    void *h = nullptr;
    ASSERT_EQ(hipHostMalloc(&h, 100, 0), hipSuccess);
    ASSERT_EQ(hipPointerGetAttributes(&a, h), hipSuccess);
    EXPECT_EQ(a.memoryType, hipMemoryTypeHost);
    void *dev = nullptr;
    EXPECT_EQ(hipHostGetDevicePointer(&dev, h, 0), hipSuccess);
    EXPECT_EQ(dev, h);
    EXPECT_EQ(hipHostFree(h), hipSuccess);
    munmap(p, 2 * page());
}

TEST(PointerAttributes, UnregisteredCurrentIsSuccessUnregistered)
{
    int local = 0;
    hipPointerAttribute_t a;
    memset(&a, 0x5a, sizeof a);
    ASSERT_EQ(hipPointerGetAttributes(&a, &local), hipSuccess);
    EXPECT_EQ((int)a.memoryType, 0);
    EXPECT_EQ(a.device, -1);
    EXPECT_EQ(a.hostPointer, nullptr);
    EXPECT_EQ(a.devicePointer, nullptr);
}

TEST(PointerAttributes, UnregisteredLegacyIsInvalidValue)
{
    IN_CHILD_WITH_ENV("SIMHIP_PERSONALITY", "legacy", {
        int local = 0;
        hipPointerAttribute_t a;
        CHILD_CHECK(hipPointerGetAttributes(&a, &local) == hipErrorInvalidValue);
    });
}

// ---- copies and memsets -----------------------------------------------------

TEST(Memcpy, RoundTripThroughDeviceMemory)
{
    PinnedInts src(1024), dst(1024);
    ASSERT_TRUE(src.p && dst.p);
    for (int i = 0; i < 1024; i++)
        src.p[i] = i * 3;
    void *d = nullptr;
    ASSERT_EQ(hipMalloc(&d, 4096), hipSuccess);
    hipStream_t s;
    ASSERT_EQ(hipStreamCreate(&s), hipSuccess);
    ASSERT_EQ(hipMemcpyAsync(d, src.p, 4096, hipMemcpyHostToDevice, s), hipSuccess);
    ASSERT_EQ(hipMemcpyAsync(dst.p, d, 4096, hipMemcpyDeviceToHost, s), hipSuccess);
    ASSERT_EQ(hipStreamSynchronize(s), hipSuccess);
    for (int i = 0; i < 1024; i++)
        ASSERT_EQ(dst.p[i], i * 3);
    ASSERT_EQ(hipMemsetD32Async(d, 0x01020304, 1024, s), hipSuccess);
    ASSERT_EQ(hipMemcpyAsync(dst.p, d, 4096, hipMemcpyDefault, s), hipSuccess);
    ASSERT_EQ(hipStreamSynchronize(s), hipSuccess);
    EXPECT_EQ(dst.p[0], 0x01020304);
    EXPECT_EQ(dst.p[1023], 0x01020304);
    ASSERT_EQ(hipMemset(d, 0xff, 4096), hipSuccess);
    std::vector<int> pageable(1024);
    ASSERT_EQ(hipMemcpy(pageable.data(), d, 4096, hipMemcpyDeviceToHost), hipSuccess);
    EXPECT_EQ(pageable[5], -1);
    ASSERT_EQ(hipMemsetAsync(src.p, 0, 4096, s), hipSuccess); // registered: device address
    ASSERT_EQ(hipStreamSynchronize(s), hipSuccess);
    EXPECT_EQ(src.p[7], 0);
    EXPECT_EQ(hipMemcpy(d, src.p, 16, (hipMemcpyKind)9), hipErrorInvalidMemcpyDirection);
    EXPECT_EQ(hipFree(d), hipSuccess);
    EXPECT_EQ(hipStreamDestroy(s), hipSuccess);
}

TEST(Memcpy, PageableAsyncIsSynchronousRegisteredIsNot)
{
    hipStream_t s;
    ASSERT_EQ(hipStreamCreate(&s), hipSuccess);
    void *d = nullptr;
    ASSERT_EQ(hipMalloc(&d, 4096), hipSuccess);
    OrderLog log;
    LogEntry e{&log, 1, 120};

    std::vector<char> pageable(4096, 'x');
    ASSERT_EQ(simhipLaunchKernel(s, k_log, &e), hipSuccess);
    double t0 = now_ms();
    ASSERT_EQ(hipMemcpyAsync(d, pageable.data(), 4096, hipMemcpyHostToDevice, s), hipSuccess);
    EXPECT_GE(now_ms() - t0, 90.0); // waited for the stream, then copied
    EXPECT_EQ(((char *)d)[4095], 'x');

    PinnedInts pinned(1024);
    ASSERT_TRUE(pinned.p);
    memset(pinned.p, 'y', 4096);
    ASSERT_EQ(simhipLaunchKernel(s, k_log, &e), hipSuccess);
    t0 = now_ms();
    ASSERT_EQ(hipMemcpyAsync(d, pinned.p, 4096, hipMemcpyHostToDevice, s), hipSuccess);
    EXPECT_LT(now_ms() - t0, 60.0);
    EXPECT_EQ(((char *)d)[0], 'x'); // not yet
    ASSERT_EQ(hipStreamSynchronize(s), hipSuccess);
    EXPECT_EQ(((char *)d)[0], 'y');
    EXPECT_EQ(hipFree(d), hipSuccess);
    EXPECT_EQ(hipStreamDestroy(s), hipSuccess);
}

TEST(Malloc, FreeValidatesAndSynchronizes)
{
    void *d = nullptr;
    EXPECT_EQ(hipMalloc(nullptr, 16), hipErrorInvalidValue);
    ASSERT_EQ(hipMalloc(&d, 4096), hipSuccess);
    EXPECT_EQ(hipFree((char *)d + 8), hipErrorInvalidValue);
    OrderLog log;
    LogEntry e{&log, 1, 100};
    ASSERT_EQ(simhipLaunchKernel(0, k_log, &e), hipSuccess);
    ASSERT_EQ(hipFree(d), hipSuccess);
    EXPECT_EQ(log.v.size(), 1u);
    EXPECT_EQ(hipFree(d), hipErrorInvalidValue);
    EXPECT_EQ(hipFree(nullptr), hipSuccess);
}
