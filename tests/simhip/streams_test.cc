// Streams: ordering, asynchrony, null-stream rules, per-thread streams,
// destroy, device synchronize, events, host functions, device API, errors.
#include <dirent.h>
#include <pthread.h>
#include <sys/wait.h>

#include "sim_common.h"

// Every death/exit test of this binary re-executes it (fresh simhip). Set
// from an environment (after gtest's own flag initialization and parsing).
namespace {
struct ThreadsafeDeathTests : ::testing::Environment {
    void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};
const auto *kEnv = ::testing::AddGlobalTestEnvironment(new ThreadsafeDeathTests);
} // namespace

TEST(Stream, RunsOpsInOrderAsynchronously)
{
    hipStream_t s;
    ASSERT_EQ(hipStreamCreate(&s), hipSuccess);
    OrderLog log;
    std::vector<LogEntry> e(50);
    for (int i = 0; i < 50; i++) {
        e[i] = {&log, i, i == 0 ? 80 : 0};
        ASSERT_EQ(simhipLaunchKernel(s, k_log, &e[i]), hipSuccess);
    }
    // The first kernel sleeps: the launches returned before any ran.
    EXPECT_EQ(hipStreamQuery(s), hipErrorNotReady);
    {
        std::lock_guard<std::mutex> g(log.m);
        EXPECT_TRUE(log.v.empty());
    }
    ASSERT_EQ(hipStreamSynchronize(s), hipSuccess);
    EXPECT_EQ(hipStreamQuery(s), hipSuccess);
    ASSERT_EQ(log.v.size(), 50u);
    for (int i = 0; i < 50; i++)
        EXPECT_EQ(log.v[i], i);
    EXPECT_EQ(hipStreamDestroy(s), hipSuccess);
}

TEST(Stream, EachStreamHasItsOwnThread)
{
    // Two non-blocking streams, each blocked 150 ms: they overlap.
    hipStream_t a, b;
    ASSERT_EQ(hipStreamCreateWithFlags(&a, hipStreamNonBlocking), hipSuccess);
    ASSERT_EQ(hipStreamCreateWithFlags(&b, hipStreamNonBlocking), hipSuccess);
    OrderLog log;
    LogEntry ea{&log, 1, 150}, eb{&log, 2, 150};
    double t0 = now_ms();
    ASSERT_EQ(simhipLaunchKernel(a, k_log, &ea), hipSuccess);
    ASSERT_EQ(simhipLaunchKernel(b, k_log, &eb), hipSuccess);
    ASSERT_EQ(hipDeviceSynchronize(), hipSuccess);
    EXPECT_LT(now_ms() - t0, 290.0);
    EXPECT_EQ(log.v.size(), 2u);
    EXPECT_EQ(hipStreamDestroy(a), hipSuccess);
    EXPECT_EQ(hipStreamDestroy(b), hipSuccess);
}

TEST(NullStream, WaitsForPriorWorkOnBlockingStreams)
{
    PinnedInts m;
    ASSERT_TRUE(m.p);
    m.p[0] = 0;
    hipStream_t s;
    ASSERT_EQ(hipStreamCreate(&s), hipSuccess);
    SleepWrite w{100, &m.p[0], 1};
    int seen = -1;
    ReadInto r{&m.p[0], &seen};
    ASSERT_EQ(simhipLaunchKernel(s, k_sleep_write, &w), hipSuccess);
    ASSERT_EQ(simhipLaunchKernel(0, k_read_into, &r), hipSuccess);
    ASSERT_EQ(hipDeviceSynchronize(), hipSuccess);
    EXPECT_EQ(seen, 1);
    EXPECT_EQ(hipStreamDestroy(s), hipSuccess);
}

TEST(NullStream, LaterBlockingStreamWorkWaitsForIt)
{
    PinnedInts m;
    ASSERT_TRUE(m.p);
    m.p[0] = 0;
    hipStream_t s;
    ASSERT_EQ(hipStreamCreate(&s), hipSuccess);
    SleepWrite w{100, &m.p[0], 1};
    int seen = -1;
    ReadInto r{&m.p[0], &seen};
    ASSERT_EQ(simhipLaunchKernel(0, k_sleep_write, &w), hipSuccess);
    ASSERT_EQ(simhipLaunchKernel(s, k_read_into, &r), hipSuccess);
    ASSERT_EQ(hipStreamSynchronize(s), hipSuccess);
    EXPECT_EQ(seen, 1);
    EXPECT_EQ(hipStreamDestroy(s), hipSuccess);
}

TEST(NullStream, NonBlockingStreamsNeverSynchronizeWithIt)
{
    PinnedInts m;
    ASSERT_TRUE(m.p);
    m.p[0] = 0;
    m.p[1] = 0;
    hipStream_t nb;
    ASSERT_EQ(hipStreamCreateWithFlags(&nb, hipStreamNonBlocking), hipSuccess);
    int seen1 = -1, seen2 = -1;
    // null stream does not wait for the non-blocking stream ...
    SleepWrite w1{150, &m.p[0], 1};
    ReadInto r1{&m.p[0], &seen1};
    ASSERT_EQ(simhipLaunchKernel(nb, k_sleep_write, &w1), hipSuccess);
    ASSERT_EQ(simhipLaunchKernel(0, k_read_into, &r1), hipSuccess);
    ASSERT_EQ(hipStreamSynchronize(0), hipSuccess);
    EXPECT_EQ(seen1, 0);
    ASSERT_EQ(hipStreamSynchronize(nb), hipSuccess);
    // ... nor does the non-blocking stream wait for the null stream.
    SleepWrite w2{150, &m.p[1], 1};
    ReadInto r2{&m.p[1], &seen2};
    ASSERT_EQ(simhipLaunchKernel(0, k_sleep_write, &w2), hipSuccess);
    ASSERT_EQ(simhipLaunchKernel(nb, k_read_into, &r2), hipSuccess);
    ASSERT_EQ(hipStreamSynchronize(nb), hipSuccess);
    EXPECT_EQ(seen2, 0);
    ASSERT_EQ(hipDeviceSynchronize(), hipSuccess);
    EXPECT_EQ(hipStreamDestroy(nb), hipSuccess);
}

TEST(NullStream, PerThreadStreamIsBlocking)
{
    PinnedInts m;
    ASSERT_TRUE(m.p);
    m.p[0] = 0;
    SleepWrite w{100, &m.p[0], 1};
    int seen = -1;
    ReadInto r{&m.p[0], &seen};
    ASSERT_EQ(simhipLaunchKernel(hipStreamPerThread, k_sleep_write, &w), hipSuccess);
    ASSERT_EQ(simhipLaunchKernel(0, k_read_into, &r), hipSuccess);
    ASSERT_EQ(hipStreamSynchronize(0), hipSuccess);
    EXPECT_EQ(seen, 1);
}

TEST(NullStream, SynchronizeOfNullStreamSkipsNonBlockingStreams)
{
    hipStream_t nb;
    ASSERT_EQ(hipStreamCreateWithFlags(&nb, hipStreamNonBlocking), hipSuccess);
    OrderLog log;
    LogEntry e{&log, 1, 200};
    ASSERT_EQ(simhipLaunchKernel(nb, k_log, &e), hipSuccess);
    double t0 = now_ms();
    ASSERT_EQ(hipStreamSynchronize(0), hipSuccess);
    EXPECT_LT(now_ms() - t0, 100.0);
    ASSERT_EQ(hipDeviceSynchronize(), hipSuccess);
    EXPECT_GE(now_ms() - t0, 150.0);
    EXPECT_EQ(log.v.size(), 1u);
    EXPECT_EQ(hipStreamDestroy(nb), hipSuccess);
}

TEST(Stream, DestroyReturnsAtOnceAndWorkStillCompletes)
{
    hipStream_t s;
    ASSERT_EQ(hipStreamCreate(&s), hipSuccess);
    OrderLog log;
    LogEntry e{&log, 7, 150};
    ASSERT_EQ(simhipLaunchKernel(s, k_log, &e), hipSuccess);
    double t0 = now_ms();
    ASSERT_EQ(hipStreamDestroy(s), hipSuccess);
    EXPECT_LT(now_ms() - t0, 50.0);
    EXPECT_EQ(hipStreamQuery(s), hipErrorInvalidHandle);
    ASSERT_EQ(hipDeviceSynchronize(), hipSuccess);
    ASSERT_EQ(log.v.size(), 1u);
    EXPECT_EQ(log.v[0], 7);
}

TEST(Stream, DeviceSynchronizeWaitsForEveryStream)
{
    hipStream_t a, nb;
    ASSERT_EQ(hipStreamCreate(&a), hipSuccess);
    ASSERT_EQ(hipStreamCreateWithFlags(&nb, hipStreamNonBlocking), hipSuccess);
    OrderLog log;
    LogEntry e1{&log, 1, 100}, e2{&log, 2, 120};
    ASSERT_EQ(simhipLaunchKernel(a, k_log, &e1), hipSuccess);
    ASSERT_EQ(simhipLaunchKernel(nb, k_log, &e2), hipSuccess);
    ASSERT_EQ(hipDeviceSynchronize(), hipSuccess);
    EXPECT_EQ(log.v.size(), 2u);
    EXPECT_EQ(hipStreamDestroy(a), hipSuccess);
    EXPECT_EQ(hipStreamDestroy(nb), hipSuccess);
}

TEST(Stream, CreateValidatesArguments)
{
    hipStream_t s;
    EXPECT_EQ(hipStreamCreate(nullptr), hipErrorInvalidValue);
    EXPECT_EQ(hipStreamCreateWithFlags(&s, 0x80), hipErrorInvalidValue);
    ASSERT_EQ(hipStreamCreateWithPriority(&s, hipStreamNonBlocking, -1), hipSuccess);
    EXPECT_EQ(hipStreamDestroy(s), hipSuccess);
    EXPECT_EQ(hipStreamDestroy(s), hipErrorInvalidHandle);
    EXPECT_EQ(hipStreamDestroy(0), hipErrorInvalidHandle);
}

// ---- events ---------------------------------------------------------------

// The time between two completed events, in milliseconds (-1 if none).
static float elapsed_ms(hipEvent_t a, hipEvent_t b)
{
    float ms = -1;
    EXPECT_EQ(hipEventElapsedTime(&ms, a, b), hipSuccess);
    return ms;
}

TEST(Event, RecordQuerySynchronizeElapsed)
{
    hipStream_t s;
    hipEvent_t a, b;
    ASSERT_EQ(hipStreamCreate(&s), hipSuccess);
    ASSERT_EQ(hipEventCreate(&a), hipSuccess);
    ASSERT_EQ(hipEventCreateWithFlags(&b, 0), hipSuccess);
    EXPECT_EQ(hipEventQuery(a), hipSuccess); // never recorded
    OrderLog log;
    LogEntry e{&log, 1, 100};
    ASSERT_EQ(hipEventRecord(a, s), hipSuccess);
    ASSERT_EQ(simhipLaunchKernel(s, k_log, &e), hipSuccess);
    ASSERT_EQ(hipEventRecord(b, s), hipSuccess);
    EXPECT_EQ(hipEventQuery(b), hipErrorNotReady);
    float ms = -1;
    EXPECT_EQ(hipEventElapsedTime(&ms, a, b), hipErrorNotReady);
    ASSERT_EQ(hipEventSynchronize(b), hipSuccess);
    EXPECT_EQ(log.v.size(), 1u); // the kernel before b completed
    EXPECT_EQ(hipEventQuery(b), hipSuccess);
    ms = elapsed_ms(a, b);
    EXPECT_GE(ms, 90.0f);
    EXPECT_LT(ms, 1000.0f);
    EXPECT_EQ(hipEventDestroy(a), hipSuccess);
    EXPECT_EQ(hipEventDestroy(b), hipSuccess);
    EXPECT_EQ(hipEventQuery(a), hipErrorInvalidHandle);
    EXPECT_EQ(hipStreamDestroy(s), hipSuccess);
}

// An event marker completes with the work it waits for, as an event's
// barrier packet on a GPU queue does: a null-stream marker behind a blocking
// stream's kernel is complete by the time that stream's synchronize returns
// (it used to take another round of the null stream's worker thread), with
// the kernel's end as its time.
TEST(Event, MarkerCompletesWithTheWorkItWaitsFor)
{
    hipStream_t s;
    hipEvent_t a, b;
    ASSERT_EQ(hipStreamCreate(&s), hipSuccess);
    ASSERT_EQ(hipEventCreate(&a), hipSuccess);
    ASSERT_EQ(hipEventCreate(&b), hipSuccess);
    for (int i = 0; i < 20; i++) {
        OrderLog log;
        LogEntry e{&log, i, 5};
        ASSERT_EQ(simhipLaunchKernel(s, k_log, &e), hipSuccess);
        ASSERT_EQ(hipEventRecord(a, s), hipSuccess);
        ASSERT_EQ(hipEventRecord(b, 0), hipSuccess); // waits for s's kernel
        EXPECT_EQ(hipEventQuery(b), hipErrorNotReady);
        ASSERT_EQ(hipStreamSynchronize(s), hipSuccess);
        EXPECT_EQ(hipEventQuery(b), hipSuccess) << "round " << i;
        float ms = elapsed_ms(a, b);
        EXPECT_GE(ms, 0.0f);
        EXPECT_LT(ms, 1.0f);
    }
    EXPECT_EQ(hipEventDestroy(a), hipSuccess);
    EXPECT_EQ(hipEventDestroy(b), hipSuccess);
    EXPECT_EQ(hipStreamDestroy(s), hipSuccess);
}

TEST(Event, DisableTimingHasNoElapsedTime)
{
    hipEvent_t a, b;
    ASSERT_EQ(hipEventCreateWithFlags(&a, hipEventDisableTiming), hipSuccess);
    ASSERT_EQ(hipEventCreate(&b), hipSuccess);
    ASSERT_EQ(hipEventRecord(a, 0), hipSuccess);
    ASSERT_EQ(hipEventRecord(b, 0), hipSuccess);
    ASSERT_EQ(hipEventSynchronize(b), hipSuccess);
    float ms;
    EXPECT_EQ(hipEventElapsedTime(&ms, a, b), hipErrorInvalidHandle);
    EXPECT_EQ(hipEventDestroy(a), hipSuccess);
    EXPECT_EQ(hipEventDestroy(b), hipSuccess);
}

TEST(Event, StreamWaitEventOrdersAcrossStreams)
{
    PinnedInts m;
    ASSERT_TRUE(m.p);
    m.p[0] = 0;
    hipStream_t a, b;
    hipEvent_t ev;
    ASSERT_EQ(hipStreamCreateWithFlags(&a, hipStreamNonBlocking), hipSuccess);
    ASSERT_EQ(hipStreamCreateWithFlags(&b, hipStreamNonBlocking), hipSuccess);
    ASSERT_EQ(hipEventCreate(&ev), hipSuccess);
    SleepWrite w{100, &m.p[0], 1};
    int seen = -1;
    ReadInto r{&m.p[0], &seen};
    ASSERT_EQ(simhipLaunchKernel(a, k_sleep_write, &w), hipSuccess);
    ASSERT_EQ(hipEventRecord(ev, a), hipSuccess);
    ASSERT_EQ(hipStreamWaitEvent(b, ev, 0), hipSuccess);
    ASSERT_EQ(simhipLaunchKernel(b, k_read_into, &r), hipSuccess);
    ASSERT_EQ(hipStreamSynchronize(b), hipSuccess);
    EXPECT_EQ(seen, 1);
    EXPECT_EQ(hipEventDestroy(ev), hipSuccess);
    EXPECT_EQ(hipStreamDestroy(a), hipSuccess);
    EXPECT_EQ(hipStreamDestroy(b), hipSuccess);
}

// ---- host functions -------------------------------------------------------

struct CbRecord {
    std::atomic<int> calls{0};
    hipStream_t stream = nullptr;
    hipError_t status = hipErrorUnknown;
    pthread_t thread;
};
static void cb_record(hipStream_t s, hipError_t st, void *u)
{
    CbRecord *r = (CbRecord *)u;
    r->stream = s;
    r->status = st;
    r->thread = pthread_self();
    r->calls++;
}

TEST(HostFunction, RunInStreamOrderOnTheStreamThread)
{
    hipStream_t s;
    ASSERT_EQ(hipStreamCreate(&s), hipSuccess);
    OrderLog log;
    LogEntry k1{&log, 1, 50}, h2{&log, 2, 0}, k3{&log, 3, 0}, h4{&log, 4, 0};
    CbRecord cb;
    ASSERT_EQ(simhipLaunchKernel(s, k_log, &k1), hipSuccess);
    ASSERT_EQ(hipLaunchHostFunc(s, h_log, &h2), hipSuccess);
    ASSERT_EQ(simhipLaunchKernel(s, k_log, &k3), hipSuccess);
    ASSERT_EQ(hipStreamAddCallback(s, cb_record, &cb, 0), hipSuccess);
    ASSERT_EQ(hipLaunchHostFunc(s, h_log, &h4), hipSuccess);
    EXPECT_EQ(cb.calls.load(), 0);
    ASSERT_EQ(hipStreamSynchronize(s), hipSuccess);
    ASSERT_EQ(log.v, (std::vector<int>{1, 2, 3, 4}));
    EXPECT_EQ(cb.calls.load(), 1);
    EXPECT_EQ(cb.stream, s);
    EXPECT_EQ(cb.status, hipSuccess);
    EXPECT_FALSE(pthread_equal(cb.thread, pthread_self()));
    EXPECT_EQ(hipStreamAddCallback(s, cb_record, &cb, 1), hipErrorInvalidValue);
    EXPECT_EQ(hipLaunchHostFunc(s, nullptr, nullptr), hipErrorInvalidValue);
    EXPECT_EQ(hipStreamDestroy(s), hipSuccess);
}

// ---- device API and errors --------------------------------------------------

TEST(Device, OneDeviceByDefault)
{
    int n = 0, d = -1;
    EXPECT_EQ(hipInit(0), hipSuccess);
    ASSERT_EQ(hipGetDeviceCount(&n), hipSuccess);
    EXPECT_EQ(n, 1);
    EXPECT_EQ(hipSetDevice(0), hipSuccess);
    EXPECT_EQ(hipGetDevice(&d), hipSuccess);
    EXPECT_EQ(d, 0);
    EXPECT_EQ(hipSetDevice(1), hipErrorInvalidDevice);
    EXPECT_EQ(hipDeviceSynchronize(), hipSuccess);
}

TEST(Device, SimhipDevicesEnv)
{
    IN_CHILD_WITH_ENV("SIMHIP_DEVICES", "3", {
        int n = 0, d = -1;
        CHILD_CHECK(hipGetDeviceCount(&n) == hipSuccess && n == 3);
        CHILD_CHECK(hipSetDevice(2) == hipSuccess);
        CHILD_CHECK(hipGetDevice(&d) == hipSuccess && d == 2);
        CHILD_CHECK(hipSetDevice(3) == hipErrorInvalidDevice);
        hipStream_t s;
        CHILD_CHECK(hipStreamCreate(&s) == hipSuccess);
        CHILD_CHECK(hipStreamSynchronize(s) == hipSuccess);
        CHILD_CHECK(hipDeviceSynchronize() == hipSuccess);
    });
}

static int thread_count()
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    if (!d)
        return -1;
    while (struct dirent *e = readdir(d))
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

// A stream whose worker ran one kernel and has ended (the 50 ms linger is
// over after `wait_ms`); with SIMHIP_WORKER_EXIT_DELAY_MS it is in its last
// steps.
static hipStream_t stream_with_ended_worker(int wait_ms)
{
    hipStream_t s;
    CHILD_CHECK(hipStreamCreate(&s) == hipSuccess);
    OrderLog log;
    LogEntry e{&log, 1, 0};
    CHILD_CHECK(simhipLaunchKernel(s, k_log, &e) == hipSuccess);
    CHILD_CHECK(hipStreamSynchronize(s) == hipSuccess);
    sleep_ms(wait_ms);
    return s;
}

// A worker that has ended still runs its last steps outside the device lock
// (joins, frees, its thread exit: allocations). A fork in their middle left
// the child an allocator lock nobody there releases (with ASan's allocator
// the child's next allocation of that size hung, 1 fork in ~2000). Here the
// last steps take 400 ms, and the fork may wait 2 s: it returns only once
// the worker is gone.
TEST(Fork, WaitsForEndedWorkersToBeGone)
{
    IN_CHILD_WITH_ENV("SIMHIP_WORKER_EXIT_DELAY_MS", "400", {
        setenv("SIMHIP_FORK_WAIT_MS", "2000", 1);
        CHILD_CHECK(hipInit(0) == hipSuccess);
        int base = thread_count();
        hipStream_t s = stream_with_ended_worker(150);
        CHILD_CHECK(thread_count() == base + 1); // and is in its last steps
        pid_t pid = fork();
        if (pid == 0)
            _exit(0);
        int after = thread_count();
        int status = 0;
        CHILD_CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
        CHILD_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        if (after != base)
            fprintf(stderr, "threads after the fork: %d, before the worker: %d\n", after, base);
        CHILD_CHECK(after == base);
        // The runtime still works in the parent.
        OrderLog log;
        LogEntry e{&log, 2, 0};
        CHILD_CHECK(simhipLaunchKernel(s, k_log, &e) == hipSuccess);
        CHILD_CHECK(hipStreamSynchronize(s) == hipSuccess);
        CHILD_CHECK(hipStreamDestroy(s) == hipSuccess);
    });
}

// The wait is bounded: a worker's thread-local destructor (a library's
// per-thread record, dropped under its mutex) may need what the forking
// thread holds. A fork that waited for that worker would never return.
static pthread_mutex_t g_table = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t g_record;
static void drop_record(void *p)
{
    pthread_mutex_lock(&g_table);
    pthread_mutex_unlock(&g_table);
    free(p);
}
static void k_keep_record(void *)
{
    pthread_setspecific(g_record, malloc(16));
}

TEST(Fork, DoesNotWaitForAWorkerThatNeedsTheForkersLock)
{
    IN_CHILD_WITH_ENV("SIMHIP_WORKER_EXIT_DELAY_MS", "0", {
        alarm(20); // a fork that never returns ends the child by SIGALRM
        CHILD_CHECK(pthread_key_create(&g_record, drop_record) == 0);
        hipStream_t s;
        CHILD_CHECK(hipStreamCreate(&s) == hipSuccess);
        for (int i = 0; i < 3; i++) {
            CHILD_CHECK(simhipLaunchKernel(s, k_keep_record, nullptr) == hipSuccess);
            CHILD_CHECK(hipStreamSynchronize(s) == hipSuccess);
            pthread_mutex_lock(&g_table);
            sleep_ms(150); // the worker ends and waits in drop_record
            pid_t pid = fork();
            if (pid == 0)
                _exit(0);
            pthread_mutex_unlock(&g_table);
            int status = 0;
            CHILD_CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
            CHILD_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        }
        CHILD_CHECK(hipStreamDestroy(s) == hipSuccess);
    });
}

// fork() is no cancellation point: a thread with a cancel pending forks, and
// is cancelled later (here at waitpid), not inside fork while simhip waits
// for an ended worker (a join is a cancellation point). Cancelled there, the
// fork never happened and the program's own fork handlers kept their locks.
static std::atomic<int> g_forked{0};
static void *fork_with_cancel_pending(void *)
{
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, nullptr);
    while (!g_forked.load()) // main cancels us, then sets 1
        usleep(1000);
    pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, nullptr);
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    g_forked = pid > 0 ? 2 : 3;
    int status;
    waitpid(pid, &status, 0); // the cancellation point the cancel acts at
    g_forked = 4;
    return nullptr;
}

TEST(Fork, IsNoCancellationPoint)
{
    IN_CHILD_WITH_ENV("SIMHIP_WORKER_EXIT_DELAY_MS", "300", {
        alarm(20);
        hipStream_t s = stream_with_ended_worker(100); // in its 300 ms last steps
        pthread_t t;
        CHILD_CHECK(pthread_create(&t, nullptr, fork_with_cancel_pending, nullptr) == 0);
        CHILD_CHECK(pthread_cancel(t) == 0);
        g_forked = 1;
        void *ret = nullptr;
        CHILD_CHECK(pthread_join(t, &ret) == 0);
        CHILD_CHECK(ret == PTHREAD_CANCELED);
        if (g_forked.load() != 2)
            fprintf(stderr, "g_forked %d: cancelled inside fork\n", g_forked.load());
        CHILD_CHECK(g_forked.load() == 2);
        // A fork of this thread still works.
        pid_t pid = fork();
        if (pid == 0)
            _exit(0);
        int status = 0;
        CHILD_CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status));
        CHILD_CHECK(hipStreamDestroy(s) == hipSuccess);
    });
}

TEST(Errors, NamesStringsAndLastError)
{
    EXPECT_STREQ(hipGetErrorName(hipSuccess), "hipSuccess");
    EXPECT_STREQ(hipGetErrorName(hipErrorStreamCaptureInvalidated),
                 "hipErrorStreamCaptureInvalidated");
    EXPECT_STREQ(hipGetErrorName(hipErrorHostMemoryNotRegistered),
                 "hipErrorHostMemoryNotRegistered");
    EXPECT_STREQ(hipGetErrorString(hipErrorInvalidValue), "invalid argument");
    EXPECT_STREQ(hipGetErrorString(hipSuccess), "no error");
    (void)hipGetLastError();
    EXPECT_EQ(hipSetDevice(99), hipErrorInvalidDevice);
    EXPECT_EQ(hipPeekAtLastError(), hipErrorInvalidDevice);
    EXPECT_EQ(hipGetLastError(), hipErrorInvalidDevice);
    EXPECT_EQ(hipGetLastError(), hipSuccess);
}
