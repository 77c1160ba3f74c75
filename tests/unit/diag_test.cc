// diag_test.cc - diagnostics' counting, called directly (no LD_PRELOAD), on
// simhip.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include <hip/hip_runtime_api.h>

#include "backend.h"
#include "diag.h"
#include "hip.h"
#include "interpose.h"
#include "options.h"
#include "registry.h"
#include "symbolize.h"

namespace {

uint64_t runtime_error_code() { return __atomic_load_n(&sp_stat.code_count[SP_RUNTIME_ERROR], __ATOMIC_RELAXED); }
uint64_t runtime_error_counter() { return __atomic_load_n(&sp_stat.runtime_errors, __ATOMIC_RELAXED); }

int FailRangeOnly(size_t n) { return n == sizeof(sp_range); }

} // namespace

// A runtime-error line safepin prints is counted as that code: in codes,
// counters.runtime_errors and the violations, once per line (issue 15, 12).
TEST(DiagCounts, EveryPrintedRuntimeErrorIsCountedOnce)
{
    sp_init();
    uint64_t code0 = runtime_error_code(), counter0 = runtime_error_counter();
    uint64_t viol0 = sp_violations();

    // Printed by the register hook when the registry is out of memory.
    void *buf = aligned_alloc(4096, 4096);
    ASSERT_NE(buf, nullptr);
    sp_mem_set_fail_hook(FailRangeOnly);
    hipError_t e = sp_host_register(buf, 4096, 0);
    sp_mem_set_fail_hook(nullptr);
    // Refused rather than registered untracked (a stale registration later).
    EXPECT_EQ(e, hipErrorOutOfMemory);
    EXPECT_EQ(sp_hip.hipHostUnregister(buf), hipErrorHostMemoryNotRegistered);
    EXPECT_EQ(runtime_error_code() - code0, 1u);
    EXPECT_EQ(runtime_error_counter() - counter0, 1u);
    EXPECT_EQ(sp_violations() - viol0, 1u);

    // A diagnostic of the code (a release's failed real call): once as well.
    sp_diag(SP_RUNTIME_ERROR, nullptr, "a real call failed (test)");
    EXPECT_EQ(runtime_error_code() - code0, 2u);
    EXPECT_EQ(runtime_error_counter() - counter0, 2u);
    EXPECT_EQ(sp_violations() - viol0, 2u);

    // Other lines count nothing.
    sp_log(SP_LOG_ERROR, "summary", "not a diagnostic");
    EXPECT_EQ(runtime_error_code() - code0, 2u);
    EXPECT_EQ(sp_violations() - viol0, 2u);
    free(buf);
}

// Pcs that fall in one cache set stay side by side: stacks seen again cost
// no addr2line run, whichever pcs hash alike. (With one slot per pc, two
// pcs of a repeated stack that hashed alike cost an addr2line run for each,
// every time: a report of 200 such stacks once took 10 s to write.)
TEST(Symbolize, PcsThatHashAlikeDoNotEvictOneAnother)
{
    sp_init();
    sp_symbolize_init();
    sp_frame_info fi;
    char *text = reinterpret_cast<char *>(&runtime_error_code) + 1;
    unsigned long before = sp_symbolize_runs();
    sp_symbolize(reinterpret_cast<void *const *>(&text), 1, &fi);
    if (sp_symbolize_runs() == before)
        GTEST_SKIP() << "no addr2line here";
    ASSERT_NE(fi.module[0], '\0');
    const std::string module = fi.module;

    // SP_SYM_CACHE_WAYS pcs of this program's code in one set.
    void *pc[SP_SYM_CACHE_WAYS];
    int have = 0;
    unsigned set = sp_symbolize_cache_set(text + 1, 1);
    for (int off = 1; off < 65536 && have < SP_SYM_CACHE_WAYS; off++)
        if (sp_symbolize_cache_set(text + off, 1) == set)
            pc[have++] = text + off;
    ASSERT_EQ(have, SP_SYM_CACHE_WAYS);

    for (int round = 0; round < 3; round++) {
        before = sp_symbolize_runs();
        for (int i = 0; i < have; i++) {
            sp_symbolize(&pc[i], 1, &fi);
            EXPECT_EQ(module, fi.module);
        }
        if (round == 0)
            EXPECT_EQ(sp_symbolize_runs() - before, static_cast<unsigned long>(have));
        else
            EXPECT_EQ(sp_symbolize_runs() - before, 0ul) << "round " << round;
    }
}
