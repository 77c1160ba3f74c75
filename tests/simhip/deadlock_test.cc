// Deadlock detection: a runtime call from inside a host function that would
// wait for the stream running that host function aborts with a report.
#include "sim_common.h"

#define DEADLOCK_RE(api)                                                        \
    "simhip: deadlock: " api " called from a host function on stream "          \
    "(0x[0-9a-f]+|\\(nil\\)) would wait for that stream"

static hipStream_t g_stream;
static void *g_ptr;
static hipEvent_t g_event;

static void h_stream_sync(void *) { (void)hipStreamSynchronize(g_stream); }
static void h_device_sync(void *) { (void)hipDeviceSynchronize(); }
static void h_unregister(void *) { (void)hipHostUnregister(g_ptr); }
static void h_free(void *) { (void)hipFree(g_ptr); }
static void h_event_sync(void *) { (void)hipEventSynchronize(g_event); }
static void h_null_sync(void *) { (void)hipStreamSynchronize(0); }

static void run_hostfn(hipStream_t s, hipHostFn_t fn)
{
    (void)hipLaunchHostFunc(s, fn, nullptr);
    sleep_ms(2000); // the host function aborts long before
    _exit(0);
}

TEST(Deadlock, StreamSynchronizeOfOwnStream)
{
    auto body = [] {
        (void)hipStreamCreate(&g_stream);
        run_hostfn(g_stream, h_stream_sync);
    };
    EXPECT_DEATH(body(), DEADLOCK_RE("hipStreamSynchronize"));
}

TEST(Deadlock, DeviceSynchronize)
{
    auto body = [] {
        hipStream_t s;
        (void)hipStreamCreateWithFlags(&s, hipStreamNonBlocking);
        run_hostfn(s, h_device_sync);
    };
    EXPECT_DEATH(body(), DEADLOCK_RE("hipDeviceSynchronize"));
}

TEST(Deadlock, UnregisterCurrent)
{
    auto body = [] {
        g_ptr = map_pages(1);
        (void)hipHostRegister(g_ptr, page(), 0);
        hipStream_t s;
        (void)hipStreamCreateWithFlags(&s, hipStreamNonBlocking);
        run_hostfn(s, h_unregister);
    };
    EXPECT_DEATH(body(), DEADLOCK_RE("hipHostUnregister"));
}

TEST(Deadlock, UnregisterLegacyFromNullStream)
{
    auto body = [] {
        setenv("SIMHIP_PERSONALITY", "legacy", 1);
        g_ptr = map_pages(1);
        (void)hipHostRegister(g_ptr, page(), 0);
        run_hostfn(0, h_unregister);
    };
    EXPECT_DEATH(body(), DEADLOCK_RE("hipHostUnregister"));
}

TEST(Deadlock, HipFree)
{
    auto body = [] {
        (void)hipMalloc(&g_ptr, 64);
        run_hostfn(hipStreamPerThread, h_free);
    };
    EXPECT_DEATH(body(), DEADLOCK_RE("hipFree"));
}

TEST(Deadlock, EventSynchronizeOnLaterEventOfSameStream)
{
    auto body = [] {
        hipStream_t s;
        (void)hipStreamCreate(&s);
        (void)hipEventCreate(&g_event);
        static OrderLog log;
        static LogEntry e{&log, 1, 100};
        (void)simhipLaunchKernel(s, k_log, &e); // the record below comes first
        (void)hipLaunchHostFunc(s, h_event_sync, nullptr);
        (void)hipEventRecord(g_event, s); // after the host function
        sleep_ms(2000);
        _exit(0);
    };
    EXPECT_DEATH(body(), DEADLOCK_RE("hipEventSynchronize"));
}

TEST(Deadlock, ThroughTheNullStream)
{
    // A blocking stream's host function syncs the null stream, which has
    // work queued behind that host function.
    auto body = [] {
        hipStream_t s;
        (void)hipStreamCreate(&s);
        (void)hipLaunchHostFunc(s, h_null_sync, nullptr);
        (void)hipMemsetAsync(nullptr, 0, 0, 0);
        std::atomic<int> n{0};
        (void)simhipLaunchKernel(0, [](void *a) { ((std::atomic<int> *)a)->fetch_add(1); }, &n);
        sleep_ms(2000);
        _exit(0);
    };
    EXPECT_DEATH(body(), DEADLOCK_RE("hipStreamSynchronize"));
}

static std::atomic<int> g_ok{0};
static void h_sync_other(void *)
{
    if (hipStreamSynchronize(g_stream) == hipSuccess)
        g_ok++;
}

TEST(Deadlock, WaitingForAnUnrelatedStreamIsAllowed)
{
    hipStream_t a;
    ASSERT_EQ(hipStreamCreateWithFlags(&a, hipStreamNonBlocking), hipSuccess);
    ASSERT_EQ(hipStreamCreateWithFlags(&g_stream, hipStreamNonBlocking), hipSuccess);
    OrderLog log;
    LogEntry e{&log, 1, 50};
    ASSERT_EQ(simhipLaunchKernel(g_stream, k_log, &e), hipSuccess);
    ASSERT_EQ(hipLaunchHostFunc(a, h_sync_other, nullptr), hipSuccess);
    ASSERT_EQ(hipStreamSynchronize(a), hipSuccess);
    EXPECT_EQ(g_ok.load(), 1);
    EXPECT_EQ(log.v.size(), 1u);
    EXPECT_EQ(hipStreamDestroy(a), hipSuccess);
    EXPECT_EQ(hipStreamDestroy(g_stream), hipSuccess);
}
