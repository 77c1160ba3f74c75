// Stream capture (global / thread-local / relaxed), invalidation in both
// personalities, capture status queries, and graph replay.
#include <pthread.h>

#include "sim_common.h"

static void k_count(void *a)
{
    ((std::atomic<int> *)a)->fetch_add(1);
}
static void h_count(void *a)
{
    ((std::atomic<int> *)a)->fetch_add(10);
}

TEST(Capture, OpsBecomeNodesAndGraphReplaysEachLaunch)
{
    hipStream_t s;
    ASSERT_EQ(hipStreamCreate(&s), hipSuccess);
    std::atomic<int> n{0};
    PinnedInts m;
    ASSERT_TRUE(m.p);
    m.p[0] = 0;
    ASSERT_EQ(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal), hipSuccess);
    ASSERT_EQ(simhipLaunchKernel(s, k_count, &n), hipSuccess);
    ASSERT_EQ(hipLaunchHostFunc(s, h_count, &n), hipSuccess);
    ASSERT_EQ(hipMemsetD32Async(m.p, 77, 1, s), hipSuccess);
    hipGraph_t g = nullptr;
    ASSERT_EQ(hipStreamEndCapture(s, &g), hipSuccess);
    ASSERT_NE(g, nullptr);
    sleep_ms(20);
    EXPECT_EQ(n.load(), 0); // captured, not executed
    EXPECT_EQ(m.p[0], 0);
    hipGraphExec_t x = nullptr;
    ASSERT_EQ(hipGraphInstantiate(&x, g, nullptr, nullptr, 0), hipSuccess);
    for (int i = 0; i < 3; i++)
        ASSERT_EQ(hipGraphLaunch(x, s), hipSuccess);
    ASSERT_EQ(hipStreamSynchronize(s), hipSuccess);
    EXPECT_EQ(n.load(), 33);
    EXPECT_EQ(m.p[0], 77);
    EXPECT_EQ(hipGraphExecDestroy(x), hipSuccess);
    EXPECT_EQ(hipGraphDestroy(g), hipSuccess);
    EXPECT_EQ(hipStreamDestroy(s), hipSuccess);
}

TEST(Capture, StatusQueries)
{
    hipStream_t s;
    ASSERT_EQ(hipStreamCreate(&s), hipSuccess);
    hipStreamCaptureStatus st = hipStreamCaptureStatusActive;
    unsigned long long id = 0, id2 = 0;
    ASSERT_EQ(hipStreamIsCapturing(s, &st), hipSuccess);
    EXPECT_EQ(st, hipStreamCaptureStatusNone);
    ASSERT_EQ(hipStreamBeginCapture(s, hipStreamCaptureModeThreadLocal), hipSuccess);
    EXPECT_EQ(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal), hipErrorIllegalState);
    ASSERT_EQ(hipStreamIsCapturing(s, &st), hipSuccess);
    EXPECT_EQ(st, hipStreamCaptureStatusActive);
    ASSERT_EQ(hipStreamGetCaptureInfo(s, &st, &id), hipSuccess);
    EXPECT_EQ(st, hipStreamCaptureStatusActive);
    EXPECT_NE(id, 0ull);
    hipGraph_t g;
    ASSERT_EQ(hipStreamEndCapture(s, &g), hipSuccess);
    ASSERT_EQ(hipStreamBeginCapture(s, hipStreamCaptureModeRelaxed), hipSuccess);
    ASSERT_EQ(hipStreamGetCaptureInfo(s, &st, &id2), hipSuccess);
    EXPECT_NE(id, id2);
    hipGraph_t g2;
    ASSERT_EQ(hipStreamEndCapture(s, &g2), hipSuccess);
    EXPECT_EQ(hipStreamEndCapture(s, &g2), hipErrorIllegalState);
    EXPECT_EQ(hipStreamBeginCapture(0, hipStreamCaptureModeGlobal), hipErrorStreamCaptureUnsupported);
    EXPECT_EQ(hipGraphDestroy(g), hipSuccess);
    EXPECT_EQ(hipGraphDestroy(g2), hipSuccess);
    EXPECT_EQ(hipStreamDestroy(s), hipSuccess);
}

TEST(Capture, EventRecordDuringCaptureRecordsNoMarker)
{
    hipStream_t s;
    hipEvent_t ev;
    ASSERT_EQ(hipStreamCreate(&s), hipSuccess);
    ASSERT_EQ(hipEventCreate(&ev), hipSuccess);
    OrderLog log;
    LogEntry e{&log, 1, 150};
    ASSERT_EQ(simhipLaunchKernel(s, k_log, &e), hipSuccess); // stream busy
    ASSERT_EQ(hipStreamBeginCapture(s, hipStreamCaptureModeRelaxed), hipSuccess);
    ASSERT_EQ(hipEventRecord(ev, s), hipSuccess);
    hipGraph_t g;
    ASSERT_EQ(hipStreamEndCapture(s, &g), hipSuccess);
    EXPECT_EQ(hipEventQuery(ev), hipSuccess); // a real marker would be NotReady
    ASSERT_EQ(hipEventRecord(ev, s), hipSuccess);
    EXPECT_EQ(hipEventQuery(ev), hipErrorNotReady);
    ASSERT_EQ(hipStreamSynchronize(s), hipSuccess);
    EXPECT_EQ(hipGraphDestroy(g), hipSuccess);
    EXPECT_EQ(hipEventDestroy(ev), hipSuccess);
    EXPECT_EQ(hipStreamDestroy(s), hipSuccess);
}

// A second thread makes one call while the main thread captures.
struct OtherCall {
    int which; // 0 register, 1 unregister, 2 hipFree, 3 query, 4 sync, 5 event sync,
               // 6 event query
    bool relaxed;
    void *ptr;
    hipStream_t stream;
    hipEvent_t event;
    hipError_t result;
};
static void *other_call(void *a)
{
    OtherCall *c = (OtherCall *)a;
    if (c->relaxed) {
        hipStreamCaptureMode m = hipStreamCaptureModeRelaxed;
        (void)hipThreadExchangeStreamCaptureMode(&m);
    }
    switch (c->which) {
    case 0: c->result = hipHostRegister(c->ptr, page(), 0); break;
    case 1: c->result = hipHostUnregister(c->ptr); break;
    case 2: c->result = hipFree(c->ptr); break;
    case 3: c->result = hipStreamQuery(c->stream); break;
    case 4: c->result = hipStreamSynchronize(c->stream); break;
    case 5: c->result = hipEventSynchronize(c->event); break;
    default: c->result = hipEventQuery(c->event); break;
    }
    return nullptr;
}
static hipError_t call_from_thread(OtherCall &c)
{
    pthread_t t;
    pthread_create(&t, nullptr, other_call, &c);
    pthread_join(t, nullptr);
    return c.result;
}

// Returns (call result, EndCapture result) for call `which` made by another
// thread during a global-mode capture on this thread.
static void conflict_case(int which, bool relaxed, hipError_t *call, hipError_t *end)
{
    hipStream_t cap, other;
    (void)hipStreamCreate(&cap);
    (void)hipStreamCreate(&other);
    hipEvent_t ev;
    (void)hipEventCreate(&ev);
    (void)hipEventRecord(ev, other);
    (void)hipEventSynchronize(ev); // `other` idle: its query answers hipSuccess
    char *p = map_pages(1);
    void *d = nullptr;
    if (which == 1)
        (void)hipHostRegister(p, page(), 0);
    if (which == 2)
        (void)hipMalloc(&d, 64);
    (void)hipStreamBeginCapture(cap, hipStreamCaptureModeGlobal);
    OtherCall c{which, relaxed, which == 2 ? d : (void *)p, other, ev, hipErrorUnknown};
    *call = call_from_thread(c);
    hipGraph_t g = nullptr;
    *end = hipStreamEndCapture(cap, &g);
    if (g)
        (void)hipGraphDestroy(g);
    (void)hipHostUnregister(p);
    (void)hipFree(d);
    (void)hipEventDestroy(ev);
    (void)hipStreamDestroy(cap);
    (void)hipStreamDestroy(other);
    munmap(p, page());
}

TEST(CaptureConflict, CurrentReturns900AndInvalidates)
{
    for (int which = 0; which < 6; which++) {
        hipError_t call, end;
        conflict_case(which, false, &call, &end);
        EXPECT_EQ(call, hipErrorStreamCaptureUnsupported) << "call " << which;
        EXPECT_EQ(end, hipErrorStreamCaptureInvalidated) << "call " << which;
    }
}

TEST(CaptureConflict, RelaxedCallerIsAllowed)
{
    for (int which = 0; which < 6; which++) {
        hipError_t call, end;
        conflict_case(which, true, &call, &end);
        EXPECT_EQ(call, hipSuccess) << "call " << which;
        EXPECT_EQ(end, hipSuccess) << "call " << which;
    }
}

TEST(CaptureConflict, LegacyReturns900WithoutInvalidating)
{
    IN_CHILD_WITH_ENV("SIMHIP_PERSONALITY", "legacy", {
        for (int which = 0; which < 6; which++) {
            hipError_t call, end;
            conflict_case(which, false, &call, &end);
            CHILD_CHECK(call == hipErrorStreamCaptureUnsupported);
            CHILD_CHECK(end == hipSuccess);
        }
    });
}

// hipEventQuery joined the refused calls in ROCm 7.0: rocm7 refuses and
// invalidates it as the others; before, the query answers and the capture
// survives.
TEST(CaptureConflict, EventQueryRefusedOnlyByRocm7)
{
    IN_CHILD_WITH_ENV("SIMHIP_PERSONALITY", "current", {
        hipError_t call, end;
        conflict_case(6, false, &call, &end);
        CHILD_CHECK(call == hipSuccess);
        CHILD_CHECK(end == hipSuccess);
    });
    IN_CHILD_WITH_ENV("SIMHIP_PERSONALITY", "rocm7", {
        for (int which = 0; which < 7; which++) {
            hipError_t c7, e7;
            conflict_case(which, false, &c7, &e7);
            CHILD_CHECK(c7 == hipErrorStreamCaptureUnsupported);
            CHILD_CHECK(e7 == hipErrorStreamCaptureInvalidated);
        }
        hipError_t cr, er;
        conflict_case(6, true, &cr, &er); // a relaxed caller is allowed
        CHILD_CHECK(cr == hipSuccess);
        CHILD_CHECK(er == hipSuccess);
    });
}

TEST(CaptureConflict, ThreadLocalCaptureOnlyRestrictsItsOwnThread)
{
    hipStream_t cap;
    ASSERT_EQ(hipStreamCreate(&cap), hipSuccess);
    char *p = map_pages(1);
    ASSERT_EQ(hipStreamBeginCapture(cap, hipStreamCaptureModeThreadLocal), hipSuccess);
    OtherCall c{0, false, p, nullptr, nullptr, hipErrorUnknown};
    EXPECT_EQ(call_from_thread(c), hipSuccess); // another thread: fine
    EXPECT_EQ(hipHostUnregister(p), hipErrorStreamCaptureUnsupported); // own thread
    hipGraph_t g = nullptr;
    EXPECT_EQ(hipStreamEndCapture(cap, &g), hipErrorStreamCaptureInvalidated);
    EXPECT_EQ(g, nullptr);
    EXPECT_EQ(hipHostUnregister(p), hipSuccess);
    EXPECT_EQ(hipStreamDestroy(cap), hipSuccess);
    munmap(p, page());
}

TEST(CaptureConflict, ExchangeModeIsPerThread)
{
    hipStreamCaptureMode m = hipStreamCaptureModeRelaxed;
    ASSERT_EQ(hipThreadExchangeStreamCaptureMode(&m), hipSuccess);
    EXPECT_EQ(m, hipStreamCaptureModeGlobal); // the default
    hipStream_t cap;
    ASSERT_EQ(hipStreamCreate(&cap), hipSuccess);
    ASSERT_EQ(hipStreamBeginCapture(cap, hipStreamCaptureModeGlobal), hipSuccess);
    char *p = map_pages(1);
    EXPECT_EQ(hipHostRegister(p, page(), 0), hipSuccess); // this thread is relaxed
    OtherCall c{1, false, p, nullptr, nullptr, hipErrorUnknown};
    EXPECT_EQ(call_from_thread(c), hipErrorStreamCaptureUnsupported); // other is global
    hipStreamCaptureStatus st;
    ASSERT_EQ(hipStreamIsCapturing(cap, &st), hipSuccess);
    EXPECT_EQ(st, hipStreamCaptureStatusInvalidated);
    // Work enqueued into an invalidated capture fails.
    std::atomic<int> n{0};
    EXPECT_EQ(simhipLaunchKernel(cap, k_count, &n), hipErrorStreamCaptureInvalidated);
    hipGraph_t g = nullptr;
    EXPECT_EQ(hipStreamEndCapture(cap, &g), hipErrorStreamCaptureInvalidated);
    m = hipStreamCaptureModeGlobal;
    ASSERT_EQ(hipThreadExchangeStreamCaptureMode(&m), hipSuccess);
    EXPECT_EQ(m, hipStreamCaptureModeRelaxed);
    EXPECT_EQ(hipHostUnregister(p), hipSuccess);
    EXPECT_EQ(hipStreamDestroy(cap), hipSuccess);
    munmap(p, page());
}

static void *end_capture_thread(void *a)
{
    hipGraph_t g;
    return (void *)(intptr_t)hipStreamEndCapture((hipStream_t)a, &g);
}

TEST(Capture, EndFromAnotherThreadIsWrongThread)
{
    hipStream_t s;
    ASSERT_EQ(hipStreamCreate(&s), hipSuccess);
    ASSERT_EQ(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal), hipSuccess);
    pthread_t t;
    void *r;
    pthread_create(&t, nullptr, end_capture_thread, s);
    pthread_join(t, &r);
    EXPECT_EQ((hipError_t)(intptr_t)r, hipErrorStreamCaptureWrongThread);
    hipGraph_t g;
    EXPECT_EQ(hipStreamEndCapture(s, &g), hipSuccess);
    EXPECT_EQ(hipGraphDestroy(g), hipSuccess);
    EXPECT_EQ(hipStreamDestroy(s), hipSuccess);
}

// The modes as clr's CHECK_STREAM_CAPTURE_SUPPORTED and CUDA apply them: a
// relaxed caller is never refused; any other caller is refused where its own
// thread captures (global or thread-local); only a global caller is refused
// for another thread's global capture.
struct ModeCase {
    bool own;
    hipStreamCaptureMode capture, caller;
    hipError_t unregister;
};
static void *mode_case(void *a)
{
    ModeCase *c = (ModeCase *)a;
    hipStream_t cap;
    (void)hipStreamCreate(&cap);
    char *p = map_pages(1);
    (void)hipHostRegister(p, page(), 0);
    hipStreamCaptureMode m = c->caller;
    (void)hipThreadExchangeStreamCaptureMode(&m);
    if (c->own) {
        (void)hipStreamBeginCapture(cap, c->capture);
        c->unregister = hipHostUnregister(p);
    } else {
        pthread_t t;
        struct Cap {
            hipStream_t s;
            hipStreamCaptureMode mode;
            int phase;
            pthread_mutex_t mu;
            pthread_cond_t cv;
        } k = {cap, c->capture, 0, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER};
        auto body = [](void *a) -> void * {
            Cap *k = (Cap *)a;
            (void)hipStreamBeginCapture(k->s, k->mode);
            pthread_mutex_lock(&k->mu);
            k->phase = 1;
            pthread_cond_broadcast(&k->cv);
            while (k->phase != 2)
                pthread_cond_wait(&k->cv, &k->mu);
            pthread_mutex_unlock(&k->mu);
            hipGraph_t g = nullptr;
            if (hipStreamEndCapture(k->s, &g) == hipSuccess && g)
                (void)hipGraphDestroy(g);
            return nullptr;
        };
        pthread_create(&t, nullptr, body, &k);
        pthread_mutex_lock(&k.mu);
        while (k.phase != 1)
            pthread_cond_wait(&k.cv, &k.mu);
        pthread_mutex_unlock(&k.mu);
        c->unregister = hipHostUnregister(p);
        pthread_mutex_lock(&k.mu);
        k.phase = 2;
        pthread_cond_broadcast(&k.cv);
        pthread_mutex_unlock(&k.mu);
        pthread_join(t, nullptr);
    }
    if (c->own) {
        hipGraph_t g = nullptr;
        if (hipStreamEndCapture(cap, &g) == hipSuccess && g)
            (void)hipGraphDestroy(g);
    }
    m = hipStreamCaptureModeGlobal;
    (void)hipThreadExchangeStreamCaptureMode(&m);
    (void)hipHostUnregister(p);
    (void)hipStreamDestroy(cap);
    munmap(p, page());
    return nullptr;
}

TEST(CaptureConflict, ModesRefuseAsTheRuntimeDoes)
{
    const hipStreamCaptureMode G = hipStreamCaptureModeGlobal, T = hipStreamCaptureModeThreadLocal,
                               R = hipStreamCaptureModeRelaxed;
    for (int own = 0; own < 2; own++)
        for (hipStreamCaptureMode cap : {G, T, R})
            for (hipStreamCaptureMode caller : {G, T, R}) {
                ModeCase c{own != 0, cap, caller, hipErrorUnknown};
                pthread_t t;
                pthread_create(&t, nullptr, mode_case, &c);
                pthread_join(t, nullptr);
                bool refused = caller != R && (own ? cap != R : caller == G && cap == G);
                EXPECT_EQ(c.unregister, refused ? hipErrorStreamCaptureUnsupported : hipSuccess)
                    << "own " << own << " capture mode " << cap << " caller mode " << caller;
            }
}
