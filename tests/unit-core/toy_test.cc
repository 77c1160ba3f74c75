// toy_test.cc - the core driven by a toy runtime: a table of its own
// (runtime.h) with its own codes, whose "device" is a set of streams whose
// work the test completes by hand. This binary links the core (util,
// registry, diag, runtime, streams, reaper, core) and the process layer
// (interpose/ without its exports), with no HIP and no CUDA: the toy is
// their one face (toy_face.cc). Each test shows the hazard on the toy's own calls first
// (the program's pattern with no safepin between), then the core keeping
// it from happening.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "core.h"
#include "diag.h"
#include "options.h"
#include "reaper.h"
#include "registry.h"
#include "runtime.h"
#include "util.h"

namespace {

// ---- the toy runtime -------------------------------------------------------

constexpr int TOY = 2; // its slot: neither HIP's (0) nor CUDA's (1)
enum : int { T_OK = 0, T_INVALID = 41, T_ALREADY = 42, T_NOTREG = 43, T_OOM = 44,
             T_NOTREADY = 45, T_INVALIDATED = 46, T_INFN = 47 };

struct Stream {
    uint64_t enq = 0, done = 0; // work items enqueued / completed, in order
    bool capturing = false;
};
struct Event {
    Stream *s;
    uint64_t at;
};
struct Work {
    Stream *s;
    uint64_t seq;
    uintptr_t base;
};

std::mutex mu;
std::condition_variable cv;
Stream null_stream_obj;
std::set<uintptr_t> registered;
std::vector<Work> work;
std::atomic<int> n_register{0}, n_unregister{0};
std::atomic<int> hazards{0};          // unregister while work on the range still runs
std::atomic<int> calls_in_host_fn{0}; // a toy call made inside a host function
std::atomic<int> recorded_in_capture{0};

void note_call()
{
    if (sp_tls_in_hostfn)
        calls_in_host_fn++;
}

Stream *S(void *s) { return s ? static_cast<Stream *>(s) : &null_stream_obj; }

int toy_present() { return 1; }
int toy_record(void *s, void **ev)
{
    note_call();
    std::lock_guard<std::mutex> g(mu);
    if (S(s)->capturing)
        recorded_in_capture++;
    // From a pool, never freed: a destroyed stream's tail marker may stay
    // with the core until the process ends (it prunes them lazily).
    static Event pool[1 << 14];
    static size_t next;
    Event *e = &pool[next++ % (sizeof(pool) / sizeof(pool[0]))];
    *e = Event{S(s), S(s)->enq};
    *ev = e;
    return T_OK;
}
int toy_event_query(void *ev)
{
    note_call();
    std::lock_guard<std::mutex> g(mu);
    Event *e = static_cast<Event *>(ev);
    return e->s->done >= e->at ? T_OK : T_NOTREADY;
}
int toy_event_sync(void *ev)
{
    note_call();
    std::unique_lock<std::mutex> g(mu);
    Event *e = static_cast<Event *>(ev);
    cv.wait(g, [&] { return e->s->done >= e->at; });
    return T_OK;
}
void toy_event_destroy(void *ev) { (void)ev; }
int toy_stream_query(void *s)
{
    note_call();
    std::lock_guard<std::mutex> g(mu);
    return S(s)->done >= S(s)->enq ? T_OK : T_NOTREADY;
}
int toy_stream_sync(void *s)
{
    note_call();
    std::unique_lock<std::mutex> g(mu);
    cv.wait(g, [&] { return S(s)->done >= S(s)->enq; });
    return T_OK;
}
void toy_stream_destroy(void *s) { (void)s; }
int toy_stream_capturing(void *s, int *capturing)
{
    std::lock_guard<std::mutex> g(mu);
    *capturing = S(s)->capturing;
    return T_OK;
}
void toy_exchange_mode(int *mode) { (void)mode; }
int toy_get_place(void **place)
{
    *place = nullptr;
    return T_OK;
}
int toy_set_place(void *) { return T_OK; }
int toy_unregister_now(void *p)
{
    note_call();
    std::lock_guard<std::mutex> g(mu);
    uintptr_t b = (uintptr_t)p;
    if (!registered.count(b))
        return T_NOTREG;
    for (const Work &w : work)
        if (w.base == b && w.s->done < w.seq)
            hazards++;
    registered.erase(b);
    n_unregister++;
    return T_OK;
}
int toy_unregister(void *place, void *p)
{
    (void)place;
    return toy_unregister_now(p);
}
int toy_free(void *, void *) { return T_OK; }
int toy_device_free(void *) { return T_OK; }
int toy_device_count() { return 1; }
int toy_where(void **place, int *device)
{
    *place = nullptr;
    if (device)
        *device = 0;
    return 0;
}
const char *toy_code_name(int code)
{
    switch (code) {
    case T_INVALID: return "TOY_INVALID";
    case T_ALREADY: return "TOY_ALREADY_REGISTERED";
    case T_NOTREG: return "TOY_NOT_REGISTERED";
    default: return "TOY_ERROR";
    }
}

const sp_rt_ops toy_ops = [] {
    sp_rt_ops o;
    memset(&o, 0, sizeof(o));
    o.name = "TOY";
    o.call_prefix = "toy";
    o.whose = "the toy's";
    o.register_name = "toyRegister";
    o.unregister_name = "toyUnregister";
    o.free_name = "toyFree";
    o.null_stream = nullptr;
    o.err_not_registered = T_NOTREG;
    o.err_already_registered = T_ALREADY;
    o.err_invalid_value = T_INVALID;
    o.err_out_of_memory = T_OOM;
    o.err_not_ready = T_NOTREADY;
    o.err_capture_invalidated = T_INVALIDATED;
    o.err_interior = T_NOTREG;
    o.err_free_in_host_fn = T_INFN;
    o.err_gone = -1;
    o.code_name = toy_code_name;
    o.present = toy_present;
    o.nest_note = "";
    o.defer_free_in_host_fn = 0;
    o.defer_destroy_in_host_fn = 1;
    o.ordinal_places = 1;
    o.per_thread_stream = (void *)2;
    o.record = toy_record;
    o.event_query = toy_event_query;
    o.event_sync = toy_event_sync;
    o.event_destroy = toy_event_destroy;
    o.stream_query = toy_stream_query;
    o.stream_sync = toy_stream_sync;
    o.stream_destroy = toy_stream_destroy;
    o.stream_capturing = toy_stream_capturing;
    o.exchange_mode = toy_exchange_mode;
    o.get_place = toy_get_place;
    o.set_place = toy_set_place;
    o.unregister = toy_unregister;
    o.mem_free = toy_free;
    o.host_unregister = toy_unregister_now;
    o.device_free = toy_device_free;
    o.device_count = toy_device_count;
    o.where = toy_where;
    return o;
}();

int toy_register(void *, void *p, size_t, unsigned)
{
    note_call();
    std::lock_guard<std::mutex> g(mu);
    if (!registered.insert((uintptr_t)p).second)
        return T_ALREADY;
    n_register++;
    return T_OK;
}

// Work on [base, ...) enqueued on s; complete_one(s) finishes its oldest item.
void enqueue(Stream *s, void *base)
{
    std::lock_guard<std::mutex> g(mu);
    work.push_back({s, ++s->enq, (uintptr_t)base});
}
void complete_one(Stream *s)
{
    std::lock_guard<std::mutex> g(mu);
    if (s->done < s->enq)
        s->done++;
    cv.notify_all();
}

const sp_call c_reg = {"toyRegister", nullptr};
const sp_call c_unreg = {"toyUnregister", nullptr};

class ToyRuntime : public ::testing::Test {
protected:
    static void SetUpTestSuite()
    {
        sp_options_parse("log=error:summary=0");
        sp_diag_init();
        sp_rt_register(TOY, &toy_ops);
        sp_streams_init_places(TOY);
    }
    void SetUp() override
    {
        sp_opt.unreg_mode = SP_UNREG_ORDERED;
        std::lock_guard<std::mutex> g(mu);
        null_stream_obj.done = null_stream_obj.enq;
        work.clear();
        n_register = n_unregister = hazards = calls_in_host_fn = recorded_in_capture = 0;
    }
    void TearDown() override
    {
        sp_reaper_drain(5000);
        std::lock_guard<std::mutex> g(mu);
        registered.clear();
    }
    alignas(4096) char buf[3][4096];
};

TEST_F(ToyRuntime, AnswersWithTheToysOwnCodes)
{
    EXPECT_EQ(T_INVALID, sp_core_register(TOY, &c_reg, toy_register, nullptr, nullptr, 64, 0));
    EXPECT_EQ(T_INVALID, sp_core_unregister(TOY, &c_unreg, nullptr));
    // Not registered: the toy itself answers, with its code.
    EXPECT_EQ(T_NOTREG, sp_core_unregister(TOY, &c_unreg, buf[0]));
    ASSERT_EQ(T_OK, sp_core_register(TOY, &c_reg, toy_register, nullptr, buf[0], 4096, 0));
    EXPECT_EQ(T_NOTREG, sp_core_unregister(TOY, &c_unreg, buf[0] + 8)); // interior: err_interior
    EXPECT_EQ(T_OK, sp_core_unregister(TOY, &c_unreg, buf[0]));
    EXPECT_EQ(T_NOTREG, sp_core_unregister(TOY, &c_unreg, buf[0])); // double
}

TEST_F(ToyRuntime, NestsAnIdenticalRegister)
{
    // Bare: the toy refuses the second register of the same memory.
    ASSERT_EQ(T_OK, toy_register(nullptr, buf[0], 4096, 0));
    EXPECT_EQ(T_ALREADY, toy_register(nullptr, buf[0], 4096, 0));
    ASSERT_EQ(T_OK, toy_unregister_now(buf[0]));
    n_register = n_unregister = 0;
    // Core: nested; one real register, one real unregister at the last.
    ASSERT_EQ(T_OK, sp_core_register(TOY, &c_reg, toy_register, nullptr, buf[0], 4096, 0));
    EXPECT_EQ(T_OK, sp_core_register(TOY, &c_reg, toy_register, nullptr, buf[0], 4096, 0));
    EXPECT_EQ(1, n_register.load());
    EXPECT_EQ(T_OK, sp_core_unregister(TOY, &c_unreg, buf[0]));
    sp_reaper_drain(5000);
    EXPECT_EQ(0, n_unregister.load()) << "released while still registered once";
    EXPECT_EQ(T_OK, sp_core_unregister(TOY, &c_unreg, buf[0]));
    sp_reaper_drain(5000);
    EXPECT_EQ(1, n_unregister.load());
    // An overlapping, different register is refused by the core, with the toy's code.
    ASSERT_EQ(T_OK, sp_core_register(TOY, &c_reg, toy_register, nullptr, buf[0], 8192, 0));
    EXPECT_EQ(T_ALREADY, sp_core_register(TOY, &c_reg, toy_register, nullptr, buf[1], 4096, 0));
    EXPECT_EQ(T_OK, sp_core_unregister(TOY, &c_unreg, buf[0]));
}

TEST_F(ToyRuntime, OrderedUnregisterWaitsForTheWorkBeforeIt)
{
    // Bare: the toy's unregister with work on the memory still queued.
    ASSERT_EQ(T_OK, toy_register(nullptr, buf[0], 4096, 0));
    enqueue(&null_stream_obj, buf[0]);
    toy_unregister_now(buf[0]);
    EXPECT_EQ(1, hazards.load()) << "the toy must show the hazard";
    complete_one(&null_stream_obj);
    hazards = 0;
    n_unregister = 0;
    // Core, ordered: returns once the work is done; released after it.
    ASSERT_EQ(T_OK, sp_core_register(TOY, &c_reg, toy_register, nullptr, buf[0], 4096, 0));
    enqueue(&null_stream_obj, buf[0]);
    std::atomic<bool> completed{false};
    std::thread dev([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        completed = true;
        complete_one(&null_stream_obj);
    });
    EXPECT_EQ(T_OK, sp_core_unregister(TOY, &c_unreg, buf[0]));
    EXPECT_TRUE(completed.load()) << "ordered unregister returned before the work before it";
    dev.join();
    sp_reaper_drain(5000);
    EXPECT_EQ(1, n_unregister.load());
    EXPECT_EQ(0, hazards.load());
}

TEST_F(ToyRuntime, RevivesAPendingRelease)
{
    sp_opt.unreg_mode = SP_UNREG_ASYNC;
    ASSERT_EQ(T_OK, sp_core_register(TOY, &c_reg, toy_register, nullptr, buf[0], 4096, 0));
    enqueue(&null_stream_obj, buf[0]);
    EXPECT_EQ(T_OK, sp_core_unregister(TOY, &c_unreg, buf[0])); // async: at once
    EXPECT_EQ(0, n_unregister.load());
    // The same register again, while the release waits: revived, no real calls.
    EXPECT_EQ(T_OK, sp_core_register(TOY, &c_reg, toy_register, nullptr, buf[0], 4096, 0));
    EXPECT_EQ(1, n_register.load());
    complete_one(&null_stream_obj);
    sp_reaper_drain(5000);
    EXPECT_EQ(0, n_unregister.load()) << "a revived range is never released";
    EXPECT_EQ(T_OK, sp_core_unregister(TOY, &c_unreg, buf[0]));
    sp_reaper_drain(5000);
    EXPECT_EQ(1, n_unregister.load());
    EXPECT_EQ(0, hazards.load());
}

struct HostFnArgs {
    void *p;
    int rc;
};

void host_fn_body(void *ud)
{
    HostFnArgs *a = static_cast<HostFnArgs *>(ud);
    a->rc = sp_core_unregister(TOY, &c_unreg, a->p);
}

TEST_F(ToyRuntime, DefersAnUnregisterInAHostFunction)
{
    ASSERT_EQ(T_OK, sp_core_register(TOY, &c_reg, toy_register, nullptr, buf[0], 4096, 0));
    enqueue(&null_stream_obj, buf[0]);
    HostFnArgs a{buf[0], -1};
    void *arg = nullptr;
    sp_host_fn t = sp_core_host_fn(TOY, nullptr, host_fn_body, &a, &arg);
    ASSERT_NE(nullptr, t);
    // The runtime's thread runs the trampoline (as a stream would).
    std::thread rt([&] { t(arg); });
    rt.join();
    EXPECT_EQ(T_OK, a.rc);
    EXPECT_EQ(0, calls_in_host_fn.load()) << "the core called the toy inside a host function";
    EXPECT_EQ(0, n_unregister.load()) << "released before the work before it";
    complete_one(&null_stream_obj);
    sp_reaper_drain(5000);
    EXPECT_EQ(1, n_unregister.load());
    EXPECT_EQ(0, hazards.load());
}

int toy_begin(void *, void *arg)
{
    std::lock_guard<std::mutex> g(mu);
    static_cast<Stream *>(arg)->capturing = true;
    return T_OK;
}
int toy_end(void *, void *arg)
{
    std::lock_guard<std::mutex> g(mu);
    static_cast<Stream *>(arg)->capturing = false;
    return T_OK;
}

TEST_F(ToyRuntime, NeverRecordsIntoACapture)
{
    sp_opt.unreg_mode = SP_UNREG_ASYNC;
    Stream s;
    ASSERT_EQ(T_OK, sp_core_stream_created(TOY, T_OK, &s, SP_STREAM_NON_BLOCKING));
    ASSERT_EQ(T_OK, sp_core_register(TOY, &c_reg, toy_register, nullptr, buf[0], 4096, 0));
    enqueue(&s, buf[0]); // before the capture: it runs
    ASSERT_EQ(T_OK, sp_streams_begin_capture_rt(TOY, &s, SP_CAPTURE_GLOBAL, toy_begin, &s));
    EXPECT_EQ(T_OK, sp_core_unregister(TOY, &c_unreg, buf[0]));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(0, n_unregister.load()) << "released before the pre-capture work";
    complete_one(&s);
    // The release needs no end of the capture (G6): it completes while open.
    for (int i = 0; i < 500 && n_unregister.load() == 0; i++)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_EQ(1, n_unregister.load());
    EXPECT_EQ(0, recorded_in_capture.load()) << "a marker was recorded into the capture";
    EXPECT_EQ(0, hazards.load());
    ASSERT_EQ(T_OK, sp_streams_end_capture_rt(TOY, &s, toy_end, &s));
    EXPECT_EQ(0, sp_core_stream_destroy(TOY, &s));
}

} // namespace
