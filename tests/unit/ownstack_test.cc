// ownstack_test.cc - safepin's own stack (util/ownstack.h): where fn runs,
// nesting, several threads at once, a signal handler that interrupts its
// use, a forked child, and the unwinders crossing the switch.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include <execinfo.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ownstack.h"

namespace {

struct Probe {
    int on_own = -1;
    int nested_on_own = -1;
    int frames = 0;
};

__attribute__((noinline)) void nested(void *arg)
{
    int here = 0;
    static_cast<Probe *>(arg)->nested_on_own = sp_ownstack_contains(&here);
}

__attribute__((noinline)) void outer(void *arg)
{
    auto *p = static_cast<Probe *>(arg);
    int here = 0;
    p->on_own = sp_ownstack_contains(&here);
    sp_call_on_own_stack(nested, p); // already there: runs in place
    void *pc[64];
    p->frames = backtrace(pc, 64);   // unwinds back onto the caller's stack
}

} // namespace

TEST(OwnStack, RunsThereNestsAndUnwindsBack)
{
    sp_ownstack_init();
    Probe p;
    int here = 0;
    EXPECT_FALSE(sp_ownstack_contains(&here));
    sp_call_on_own_stack(outer, &p);
    EXPECT_EQ(p.on_own, 1);
    EXPECT_EQ(p.nested_on_own, 1);
    void *pc[64];
    int mine = backtrace(pc, 64);
    // outer, the entry, the switch and sp_call_on_own_stack stand above
    // this test's frames: the unwinder crossed the switch.
    EXPECT_GE(p.frames, mine + 2);
    EXPECT_FALSE(sp_ownstack_held());
}

namespace {
std::atomic<int> inside{0};
std::atomic<int> most{0};

void count_inside(void *)
{
    int n = ++inside;
    int m = most.load();
    while (n > m && !most.compare_exchange_weak(m, n)) {
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    --inside;
}
} // namespace

TEST(OwnStack, OneThreadAtATime)
{
    sp_ownstack_init();
    std::vector<std::thread> ts;
    for (int i = 0; i < 8; i++)
        ts.emplace_back([] {
            for (int k = 0; k < 50; k++)
                sp_call_on_own_stack(count_inside, nullptr);
        });
    for (auto &t : ts)
        t.join();
    EXPECT_EQ(most.load(), 1);
}

namespace {
std::atomic<int> handler_ran{0};
int handler_on_own = -1;

void in_handler(void *)
{
    int here = 0;
    handler_on_own = sp_ownstack_contains(&here);
}

void on_signal(int)
{
    sp_call_on_own_stack(in_handler, nullptr); // this thread holds it: in place
    handler_ran = 1;
}

void raise_inside(void *) { raise(SIGUSR1); }
} // namespace

TEST(OwnStack, SignalHandlerInterruptingItsUseDoesNotWait)
{
    sp_ownstack_init();
    struct sigaction sa = {}, old;
    sa.sa_handler = on_signal;
    sigaction(SIGUSR1, &sa, &old);
    sp_call_on_own_stack(raise_inside, nullptr);
    sigaction(SIGUSR1, &old, nullptr);
    EXPECT_EQ(handler_ran.load(), 1);
    EXPECT_EQ(handler_on_own, 1); // the handler ran on the stack it interrupted
}

namespace {
std::atomic<int> hold_go{0};
void hold_until_forked(void *)
{
    hold_go = 1;
    while (hold_go.load() != 2)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
}
void mark(void *arg) { *static_cast<int *>(arg) = 1; }
} // namespace

TEST(OwnStack, ForkedChildGetsItFree)
{
    sp_ownstack_init();
    std::thread holder([] { sp_call_on_own_stack(hold_until_forked, nullptr); });
    while (hold_go.load() != 1)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    pid_t pid = fork();
    if (pid == 0) {
        sp_ownstack_fork_child(); // what safepin's fork handler does
        int done = 0;
        sp_call_on_own_stack(mark, &done);
        _exit(done == 1 ? 0 : 1);
    }
    hold_go = 2;
    holder.join();
    ASSERT_GT(pid, 0);
    int st = 0;
    ASSERT_EQ(waitpid(pid, &st, 0), pid);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "child status " << st;
}
