// diag_test.cc - diagnostics' counting, called directly (no LD_PRELOAD), on
// simhip.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>

#include <hip/hip_runtime_api.h>

#include "backend.h"
#include "diag.h"
#include "interpose.h"
#include "options.h"
#include "registry.h"

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
    EXPECT_EQ(sp_real.hipHostUnregister(buf), hipErrorHostMemoryNotRegistered);
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
