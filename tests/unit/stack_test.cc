// stack_test.cc - the stack walk behind a site's capture (diag/stack.c)
// gives backtrace()'s frames, or says it cannot (-1), wherever it runs:
// deep call chains, frames with alloca (their CFA is %rbp-based), threads
// with small stacks, signal handlers on the thread's stack or an alternate
// one, and after its rules were forgotten.
#include <gtest/gtest.h>

#include <alloca.h>
#include <csignal>
#include <cstring>
#include <execinfo.h>
#include <pthread.h>

#include "stack.h"

namespace {

constexpr int kMax = 64;

struct Taken {
    void *walk[kMax];
    void *bt[kMax];
    int n_walk = -2;
    int n_bt = -2;
};

// Both from one frame: the walk's frame 0 and backtrace's (its call site,
// or a sanitizer's backtrace interceptor above it) differ; every caller
// from there up must be the same, to the outermost frame.
__attribute__((noinline)) void take(Taken *t, int max)
{
    t->n_walk = sp_stack_walk(t->walk, max);
    t->n_bt = backtrace(t->bt, max);
    asm volatile("" ::: "memory");
}

// Depth frames of its own, then take(); alloca'd frames every third level.
__attribute__((noinline)) void chain(Taken *t, int depth, int max)
{
    if (depth == 0) {
        take(t, max);
    } else if (depth % 3 == 0) {
        volatile char *p = static_cast<volatile char *>(alloca(16 + depth * 8));
        p[0] = 1;
        chain(t, depth - 1, max);
        p[1] = p[0];
    } else {
        chain(t, depth - 1, max);
    }
    asm volatile("" ::: "memory");
}

// The walk's callers match backtrace's, counted from the outermost frame.
::testing::AssertionResult SameCallers(const Taken &t)
{
    if (t.n_walk < 0)
        return ::testing::AssertionSuccess() << "the walk left it to backtrace()";
    if (t.n_walk < 2 || t.n_bt < t.n_walk || t.n_bt >= kMax)
        return ::testing::AssertionFailure() << "walk " << t.n_walk << " frames, backtrace " << t.n_bt;
    for (int i = 1; i < t.n_walk; i++) {
        void *w = t.walk[t.n_walk - i], *b = t.bt[t.n_bt - i];
        if (w != b)
            return ::testing::AssertionFailure()
                   << "frame " << (t.n_walk - i) << " from the top: walk " << w << ", backtrace " << b;
    }
    return ::testing::AssertionSuccess();
}

void *thread_body(void *arg)
{
    Taken *t = static_cast<Taken *>(arg);
    chain(t, 10, kMax);
    return nullptr;
}

Taken in_handler;
void on_signal(int) { chain(&in_handler, 4, kMax); }

} // namespace

TEST(StackWalk, SameFramesAsBacktraceToTheOutermost)
{
    void *warm[2];
    backtrace(warm, 2);
    sp_stack_init();
    for (int round = 0; round < 3; round++) { // derived, then replayed
        Taken t;
        chain(&t, 30, kMax);
        ASSERT_GE(t.n_walk, 32) << "round " << round;
        EXPECT_TRUE(SameCallers(t)) << "round " << round;
        if (round == 1)
            sp_stack_forget();
    }
}

TEST(StackWalk, StopsAtMaxWithTheCallersInOrder)
{
    sp_stack_init();
    Taken t;
    chain(&t, 20, 8);
    ASSERT_EQ(t.n_walk, 8);
    // take's caller and up: the walk's 1..7 are backtrace's frames after
    // take's own (one more above it when backtrace is intercepted).
    Taken full;
    chain(&full, 20, kMax);
    ASSERT_GT(full.n_walk, 8);
    for (int i = 2; i < 8; i++) // frame 1 is in chain(), called from two sites
        EXPECT_EQ(t.walk[i], full.walk[i]) << i;
}

TEST(StackWalk, ThreadWithASmallStack)
{
    sp_stack_init();
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, 64 * 1024);
    Taken t;
    pthread_t th;
    ASSERT_EQ(pthread_create(&th, &a, thread_body, &t), 0);
    pthread_join(th, nullptr);
    pthread_attr_destroy(&a);
    ASSERT_GE(t.n_walk, 12); // to the thread's start: no frame left to backtrace()
    EXPECT_TRUE(SameCallers(t));
}

TEST(StackWalk, SignalHandlerOnTheStackAndOnAnAlternateOne)
{
    sp_stack_init();
    struct sigaction sa, old;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    ASSERT_EQ(sigaction(SIGUSR1, &sa, &old), 0);
    in_handler = Taken();
    raise(SIGUSR1);
    EXPECT_TRUE(SameCallers(in_handler));

    static char alt[256 * 1024];
    stack_t ss, old_ss;
    ss.ss_sp = alt;
    ss.ss_size = sizeof(alt);
    ss.ss_flags = 0;
    ASSERT_EQ(sigaltstack(&ss, &old_ss), 0);
    sa.sa_flags = SA_ONSTACK;
    ASSERT_EQ(sigaction(SIGUSR1, &sa, nullptr), 0);
    in_handler = Taken();
    raise(SIGUSR1);
    EXPECT_TRUE(SameCallers(in_handler));
    sigaltstack(&old_ss, nullptr);
    sigaction(SIGUSR1, &old, nullptr);
}
