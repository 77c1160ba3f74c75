// suppress_test.cc - suppressions (diag/suppress.c) and the leak policy,
// called directly: globs, parsing, matching frames, generated lines.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "diag.h"
#include "interpose.h"
#include "options.h"
#include "suppress.h"
#include "symbolize.h"

namespace {

sp_frame_info Frame(const char *func, const char *module)
{
    sp_frame_info f;
    memset(&f, 0, sizeof(f));
    snprintf(f.func, sizeof(f.func), "%s", func);
    snprintf(f.module, sizeof(f.module), "%s", module);
    return f;
}

int Add(const char *text) { return sp_supp_add_text(text, strlen(text), "test.supp", 0); }

// The suppressions the process had (the shipped defaults) come back after each test.
class Suppress : public ::testing::Test {
  protected:
    void SetUp() override
    {
        sp_init();
        sp_supp_reset();
    }
    void TearDown() override
    {
        sp_supp_reset();
        sp_supp_init();
        sp_supp_flush();
    }
};

extern "C" __attribute__((noinline)) void suppress_test_marker(void) { __asm__ volatile(""); }

} // namespace

TEST(SuppressGlob, MatchesWholeNamesWithStarAndQuestionMark)
{
    EXPECT_TRUE(sp_supp_glob("libfoo.so", "libfoo.so"));
    EXPECT_FALSE(sp_supp_glob("libfoo", "libfoo.so"));
    EXPECT_FALSE(sp_supp_glob("foo.so", "libfoo.so"));
    EXPECT_TRUE(sp_supp_glob("*foo*", "libfoo.so"));
    EXPECT_TRUE(sp_supp_glob("lib???.so", "libfoo.so"));
    EXPECT_FALSE(sp_supp_glob("lib??.so", "libfoo.so"));
    EXPECT_TRUE(sp_supp_glob("*", ""));
    EXPECT_TRUE(sp_supp_glob("a*b*c", "aXXbYYbc"));
    EXPECT_FALSE(sp_supp_glob("a*b*c", "aXXbYYbd"));
    EXPECT_TRUE(sp_supp_glob("*CachingHostAllocator*",
                             "at::cuda::(anonymous namespace)::CUDACachingHostAllocatorImpl::"
                             "allocate_host_memory_slowpath(unsigned long, void**)"));
}

TEST_F(Suppress, MalformedLinesAreCountedAndIgnored)
{
    EXPECT_EQ(Add("# comment\n\n  \nnocolon\nbogus:x\nleak-at-exit:\n:x\nleak-at-exit:libok.so\r\n"), 4);
    ASSERT_EQ(sp_supp_count(), 1);
    const sp_supp *e = sp_supp_get(0);
    EXPECT_EQ(e->code, SP_LEAK_AT_EXIT);
    EXPECT_STREQ(e->pattern, "libok.so");
    EXPECT_EQ(e->line, 8u);
    EXPECT_STREQ(sp_supp_source(e->source), "test.supp");
    std::string longpat = "leak-at-exit:" + std::string(SP_SUPP_PATTERN_MAX, 'x') + "\n";
    EXPECT_EQ(Add(longpat.c_str()), 1);
    EXPECT_EQ(sp_supp_count(), 1);
}

TEST_F(Suppress, OnlyNamedCodesAreWanted)
{
    EXPECT_FALSE(sp_supp_wanted(SP_LEAK_AT_EXIT));
    EXPECT_EQ(Add("leak-at-exit:libok.so\n"), 0);
    EXPECT_TRUE(sp_supp_wanted(SP_LEAK_AT_EXIT));
    EXPECT_FALSE(sp_supp_wanted(SP_DOUBLE_UNREGISTER));
    EXPECT_EQ(Add("*:libany.so\n"), 0);
    EXPECT_TRUE(sp_supp_wanted(SP_DOUBLE_UNREGISTER));
}

TEST_F(Suppress, FramesMatchByFunctionOrModuleAndCode)
{
    ASSERT_EQ(Add("leak-at-exit:libholder.so\ndouble-unregister:*keep*\n*:libany.so\n"), 0);
    sp_frame_info f[2] = {Frame("cuMemHostRegister_v2", "libcuda.so.1"),
                          Frame("holder_keep", "libholder.so")};
    EXPECT_EQ(sp_supp_match_frames(SP_LEAK_AT_EXIT, f, 2), 0);
    EXPECT_EQ(sp_supp_match_frames(SP_DOUBLE_UNREGISTER, f, 2), 1);
    EXPECT_EQ(sp_supp_match_frames(SP_OVERLAPPING_REGISTER, f, 2), -1);
    EXPECT_EQ(sp_supp_match_frames(SP_LEAK_AT_EXIT, f, 1), -1); // not in the frames given
    sp_frame_info g = Frame("", "libany.so");
    EXPECT_EQ(sp_supp_match_frames(SP_RUNTIME_ERROR, &g, 1), 2);

    uint64_t t0 = sp_supp_suppressed_total();
    sp_supp_hit(0, SP_LEAK_AT_EXIT);
    sp_supp_hit(0, SP_LEAK_AT_EXIT);
    EXPECT_EQ(sp_supp_get(0)->hits, 2u);
    EXPECT_EQ(sp_supp_suppressed_total() - t0, 2u);
    EXPECT_EQ(sp_supp_suppressed_code(SP_LEAK_AT_EXIT), 2u);
    EXPECT_EQ(sp_supp_suppressed_user(), 2u);
}

TEST_F(Suppress, ShippedDefaultsParseAndNamePyTorchsHostAllocator)
{
    sp_opt.default_suppressions = 1;
    sp_opt.suppressions[0] = '\0';
    EXPECT_EQ(sp_supp_init(), 0);
    ASSERT_GE(sp_supp_count(), 1);
    for (int i = 0; i < sp_supp_count(); i++) {
        EXPECT_TRUE(sp_supp_get(i)->is_default);
        EXPECT_EQ(sp_supp_get(i)->code, SP_LEAK_AT_EXIT) << sp_supp_get(i)->pattern;
    }
    // The registration stack seen on the H200 (PyTorch 2.11, CUDA 13).
    sp_frame_info f[3] = {
        Frame("cudaHostRegister", "libcudart.so.13"),
        Frame("at::cuda::(anonymous namespace)::CUDACachingHostAllocatorImpl::"
              "allocate_host_memory_slowpath(unsigned long, void**)",
              "libtorch_cuda.so"),
        Frame("at::native::_pin_memory(at::Tensor const&, std::optional<c10::Device>)",
              "libtorch_cpu.so"),
    };
    EXPECT_GE(sp_supp_match_frames(SP_LEAK_AT_EXIT, f, 3), 0);
    EXPECT_EQ(sp_supp_match_frames(SP_DOUBLE_UNREGISTER, f, 3), -1);
    sp_frame_info nameless = Frame("", "libtorch_cuda.so");
    EXPECT_GE(sp_supp_match_frames(SP_LEAK_AT_EXIT, &nameless, 1), 0);
    sp_frame_info other = Frame("my_register", "libmine.so");
    EXPECT_EQ(sp_supp_match_frames(SP_LEAK_AT_EXIT, &other, 1), -1);

    sp_opt.default_suppressions = 0;
    EXPECT_EQ(sp_supp_init(), 0);
    EXPECT_EQ(sp_supp_count(), 0);
    sp_opt.default_suppressions = 1;
}

TEST_F(Suppress, GeneratedLineNamesTheInnermostModuleOutsideTheRuntimes)
{
    size_t sz = sizeof(sp_site) + 2 * sizeof(void *);
    sp_site *s = static_cast<sp_site *>(calloc(1, sz));
    ASSERT_NE(s, nullptr);
    s->n = 2;
    s->pc[0] = reinterpret_cast<void *>(&strlen);                        // libc: skipped
    s->pc[1] = reinterpret_cast<char *>(&suppress_test_marker) + 1;      // this program
    const sp_site *stacks[2] = {nullptr, s};
    char line[512];
    ASSERT_EQ(sp_supp_generate(SP_DOUBLE_UNREGISTER, stacks, 2, 0, 0, line, sizeof(line)), 0);
    EXPECT_STREQ(line, "double-unregister:unit_tests");
    // The program's own code as safepin's: nothing left to name.
    uintptr_t lo = reinterpret_cast<uintptr_t>(&suppress_test_marker);
    EXPECT_EQ(sp_supp_generate(SP_DOUBLE_UNREGISTER, stacks, 2, lo, lo + 2, line, sizeof(line)), -1);
    free(s);
}

// leak_check=report: printed and counted, not a violation; off: nothing.
TEST(LeakCheck, ReportCountsWithoutViolationOffSaysNothing)
{
    sp_init();
    int saved = sp_opt.leak_mode;
    uint64_t code0 = sp_stat.code_count[SP_LEAK_AT_EXIT], viol0 = sp_violations();
    sp_opt.leak_mode = SP_LEAK_REPORT;
    sp_diag(SP_LEAK_AT_EXIT, nullptr, "test leak (report)");
    EXPECT_EQ(sp_stat.code_count[SP_LEAK_AT_EXIT] - code0, 1u);
    EXPECT_EQ(sp_violations() - viol0, 0u);
    sp_opt.leak_mode = SP_LEAK_OFF;
    sp_diag(SP_LEAK_AT_EXIT, nullptr, "test leak (off)");
    EXPECT_EQ(sp_stat.code_count[SP_LEAK_AT_EXIT] - code0, 1u);
    EXPECT_EQ(sp_violations() - viol0, 0u);
    sp_opt.leak_mode = SP_LEAK_STRICT;
    sp_diag(SP_LEAK_AT_EXIT, nullptr, "test leak (strict)");
    EXPECT_EQ(sp_stat.code_count[SP_LEAK_AT_EXIT] - code0, 2u);
    EXPECT_EQ(sp_violations() - viol0, 1u);
    sp_opt.leak_mode = saved;
}
