// suppress_test.cc - suppressions (diag/suppress.c) and the leak policy,
// called directly: globs, parsing, matching frames, generated lines.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <dlfcn.h>

#include "diag.h"
#include "hip.h"
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

// Code of this program that nothing else symbolizes (the symbolizer's cache
// would answer for it): one function per test that counts addr2line runs.
extern "C" __attribute__((noinline)) void supp_probe_target(void) { __asm__ volatile(""); }
extern "C" __attribute__((noinline)) void supp_module_only_target(void) { __asm__ volatile(""); }
extern "C" __attribute__((noinline)) void supp_function_target(void) { __asm__ volatile(""); }
extern "C" __attribute__((noinline)) void supp_no_match_target(void) { __asm__ volatile(""); }

// A recorded stack of these pcs (pc[0] where it was taken); free() it.
sp_site *Site(std::initializer_list<const void *> pcs)
{
    sp_site *s = static_cast<sp_site *>(calloc(1, sizeof(sp_site) + pcs.size() * sizeof(void *)));
    if (!s)
        return nullptr;
    for (const void *pc : pcs)
        s->pc[s->n++] = const_cast<void *>(pc);
    return s;
}

const void *At(void (*fn)(void), int off) { return reinterpret_cast<const char *>(fn) + off; }
// libc's own code (libc.so.6; a sanitizer runtime's qsort stands first in
// the global scope).
const void *InLibc(int off)
{
    static void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    return static_cast<const char *>(dlsym(libc, "qsort")) + off;
}

// addr2line found and answering (symbolize=1).
bool Addr2line()
{
    sp_opt.symbolize = 1;
    sp_symbolize_init();
    static int off; /* a pc the cache does not hold yet */
    void *pc = const_cast<void *>(At(supp_probe_target, ++off));
    sp_frame_info fi;
    unsigned long before = sp_symbolize_runs();
    sp_symbolize(&pc, 1, &fi);
    return sp_symbolize_runs() != before;
}

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

TEST(SuppressClass, PatternsWithDotSoNameModules)
{
    EXPECT_TRUE(sp_supp_is_module_pattern("libtorch_cuda.so"));
    EXPECT_TRUE(sp_supp_is_module_pattern("libcudart.so.*"));
    EXPECT_TRUE(sp_supp_is_module_pattern("*.so"));
    EXPECT_FALSE(sp_supp_is_module_pattern("*CachingHostAllocator*"));
    EXPECT_FALSE(sp_supp_is_module_pattern("supp_hip")); // a program's name: a function pattern
    EXPECT_FALSE(sp_supp_is_module_pattern("*"));
}

// A module pattern matches by dladdr's module name: no addr2line run, even
// with a function pattern for the code before it in the file.
TEST_F(Suppress, ModulePatternsMatchWithoutTheSymbolizer)
{
    int saved = sp_opt.symbolize;
    if (!Addr2line()) {
        sp_opt.symbolize = saved;
        GTEST_SKIP() << "no addr2line here";
    }
    ASSERT_EQ(Add("leak-at-exit:*no_such_function*\nleak-at-exit:libc.so*\n"), 0);
    sp_site *s = Site({At(supp_module_only_target, 1), InLibc(3)});
    ASSERT_NE(s, nullptr);
    const sp_site *stacks[2] = {nullptr, s};
    unsigned long before = sp_symbolize_runs();
    EXPECT_EQ(sp_supp_match(SP_LEAK_AT_EXIT, stacks, 2), 1);
    EXPECT_EQ(sp_symbolize_runs() - before, 0ul);
    free(s);
    sp_opt.symbolize = saved;
}

// A function pattern symbolizes one module at a time, in the order of the
// frames, and stops at the match: this program's frame answers, libc's is
// never symbolized; asked again, the cache answers.
TEST_F(Suppress, FunctionPatternsSymbolizeOnlyTheModulesUpToTheMatch)
{
    int saved = sp_opt.symbolize;
    if (!Addr2line()) {
        sp_opt.symbolize = saved;
        GTEST_SKIP() << "no addr2line here";
    }
    ASSERT_EQ(Add("leak-at-exit:libnothing.so\nleak-at-exit:*supp_function_target*\n"), 0);
    sp_site *s = Site({At(supp_function_target, 1), InLibc(5)});
    ASSERT_NE(s, nullptr);
    const sp_site *stacks[1] = {s};
    unsigned long before = sp_symbolize_runs();
    EXPECT_EQ(sp_supp_match(SP_LEAK_AT_EXIT, stacks, 1), 1);
    EXPECT_EQ(sp_symbolize_runs() - before, 1ul);
    before = sp_symbolize_runs();
    EXPECT_EQ(sp_supp_match(SP_LEAK_AT_EXIT, stacks, 1), 1);
    EXPECT_EQ(sp_symbolize_runs() - before, 0ul);
    // No suppression for the code: nothing symbolized, nothing matched.
    EXPECT_EQ(sp_supp_match(SP_DOUBLE_UNREGISTER, stacks, 1), -1);
    EXPECT_EQ(sp_symbolize_runs() - before, 0ul);
    free(s);

    // No match: each module once (two frames of this program, one run).
    sp_site *t = Site({At(supp_no_match_target, 1), InLibc(7), At(supp_no_match_target, 2)});
    ASSERT_NE(t, nullptr);
    stacks[0] = t;
    before = sp_symbolize_runs();
    EXPECT_EQ(sp_supp_match(SP_LEAK_AT_EXIT, stacks, 1), -1);
    EXPECT_EQ(sp_symbolize_runs() - before, 2ul);
    free(t);
    sp_opt.symbolize = saved;
}

// symbolize=0: function patterns match dladdr's (exported) names; module
// patterns all the same.
TEST_F(Suppress, WithoutTheSymbolizerExportedNamesAndModulesMatch)
{
    int saved = sp_opt.symbolize;
    sp_opt.symbolize = 0;
    sp_frame_info plain;
    sp_symbolize_plain(const_cast<void *>(InLibc(1)), &plain);
    ASSERT_NE(plain.func[0], '\0') << "dladdr names no libc function here";
    ASSERT_EQ(Add(("leak-at-exit:" + std::string(plain.func) + "\n").c_str()), 0);
    sp_site *s = Site({InLibc(1), At(supp_no_match_target, 1)});
    ASSERT_NE(s, nullptr);
    const sp_site *stacks[1] = {s};
    unsigned long before = sp_symbolize_runs();
    EXPECT_EQ(sp_supp_match(SP_LEAK_AT_EXIT, stacks, 1), 0);
    EXPECT_EQ(sp_symbolize_runs() - before, 0ul);
    free(s);
    sp_opt.symbolize = saved;
}

// backtrace=0 shows no frame, but a registration's site holds
// SP_SUPP_FRAMES for suppressions while any is loaded (none: no site).
TEST_F(Suppress, RegistrationSitesHoldFramesForSuppressions)
{
    long saved = sp_opt.backtrace;
    sp_opt.backtrace = 0;
    EXPECT_EQ(sp_site_capture_register(), nullptr);
    ASSERT_EQ(Add("leak-at-exit:libnothing.so\n"), 0);
    sp_site *s = sp_site_capture_register();
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->n, 0);
    EXPECT_GT(s->held, 0);
    EXPECT_LE(s->held, SP_SUPP_FRAMES);
    sp_site_free(s); // shared: left alone
    // The same stack again: the same site, no memory of its own.
    sp_site *same[2];
    for (int i = 0; i < 2; i++)
        same[i] = sp_site_capture_register();
    EXPECT_EQ(same[0], same[1]);
    ASSERT_NE(same[0], nullptr);
    EXPECT_TRUE(same[0]->shared);
    sp_site_free(same[0]);
    // (How many frames stand above the test's depends on what of the test
    // program counts as safepin's own code here: tests/diag checks them.)
    sp_opt.backtrace = 1;
    s = sp_site_capture_register();
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->n, 1);
    EXPECT_GE(s->held, s->n);
    sp_site_free(s);
    sp_opt.backtrace = saved;
}
