// SIMHIP_OP_DELAY_US: every device operation takes at least N us, and the
// delay elapses before the operation touches memory.
#include "sim_common.h"

TEST(OpDelay, EveryOpTakesAtLeastTheDelayBeforeTouchingMemory)
{
    IN_CHILD_WITH_ENV("SIMHIP_OP_DELAY_US", "30000", {
        PinnedInts m;
        CHILD_CHECK(m.p);
        m.p[0] = 1;
        hipStream_t s;
        CHILD_CHECK(hipStreamCreate(&s) == hipSuccess);
        double t0 = now_ms();
        CHILD_CHECK(hipMemsetAsync(m.p, 0, sizeof(int), s) == hipSuccess);
        sleep_ms(10);
#ifndef __SANITIZE_THREAD__
        // Deliberately racy read (it is what it checks): skipped under TSan.
        CHILD_CHECK(m.p[0] == 1); // not touched yet
#endif
        CHILD_CHECK(hipStreamSynchronize(s) == hipSuccess);
        CHILD_CHECK(m.p[0] == 0);
        CHILD_CHECK(now_ms() - t0 >= 29.0);
        void *d;
        CHILD_CHECK(hipMalloc(&d, 64) == hipSuccess);
        std::atomic<int> n{0};
        t0 = now_ms();
        for (int i = 0; i < 3; i++)
            CHILD_CHECK(hipMemcpyAsync(d, m.p, 64, hipMemcpyHostToDevice, s) == hipSuccess);
        CHILD_CHECK(simhipLaunchKernel(s, [](void *a) { ((std::atomic<int> *)a)->fetch_add(1); },
                                       &n) == hipSuccess);
        CHILD_CHECK(hipLaunchHostFunc(s, [](void *a) { ((std::atomic<int> *)a)->fetch_add(1); },
                                      &n) == hipSuccess);
        CHILD_CHECK(hipStreamSynchronize(s) == hipSuccess);
        CHILD_CHECK(now_ms() - t0 >= 5 * 29.0);
        CHILD_CHECK(n.load() == 2);
    });
}

TEST(OpDelay, DefaultIsNoDelay)
{
    PinnedInts m;
    ASSERT_TRUE(m.p);
    hipStream_t s;
    ASSERT_EQ(hipStreamCreate(&s), hipSuccess);
    double t0 = now_ms();
    for (int i = 0; i < 20; i++)
        ASSERT_EQ(hipMemsetAsync(m.p, i, 64, s), hipSuccess);
    ASSERT_EQ(hipStreamSynchronize(s), hipSuccess);
    EXPECT_LT(now_ms() - t0, 100.0);
    EXPECT_EQ(hipStreamDestroy(s), hipSuccess);
}
