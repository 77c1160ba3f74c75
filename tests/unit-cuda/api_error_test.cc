// api_error_test.cc - the api-error diagnostic of the CUDA face, on simcuda,
// called directly (no LD_PRELOAD): each call goes through what a shim of
// cuda/cuda_shims.c does around the logic (sp_api_enter, the logic,
// sp_api_failed on an error, sp_api_leave), and stderr is read back.
#include <gtest/gtest.h>
#include <cerrno>
#include <cstring>
#include <initializer_list>
#include <string>
#include <sys/mman.h>
#include <unistd.h>
#include "api_error.h"
#include "cu_face.h"
#include "cuda_hooks.h"
#include "cuda_real.h"
#include "diag.h"
#include "interpose.h"
#include "options.h"
#include "reaper.h"
#include "runtime.h"
#include "simcuda.h"

namespace {

void *const kKernelAddr = reinterpret_cast<void *>(0xffff888000000000ull);

uint64_t api_errors() { return __atomic_load_n(&sp_stat.code_count[SP_API_ERROR], __ATOMIC_RELAXED); }

size_t page() { return (size_t)sysconf(_SC_PAGESIZE); }

// The shim's part around a call of the logic (cuda_shims.c, SP_HOOK).
template <class F>
sp_CUresult shim(const char *name, std::initializer_list<sp_api_arg> args, F logic)
{
    sp_api_call c;
    sp_api_enter(&c);
    sp_CUresult e = logic();
    if (e != SP_CUDA_SUCCESS)
        sp_api_failed(&c, SP_RT_CUDA, name, "", e, args.begin(), (int)args.size());
    sp_api_leave();
    return e;
}

size_t count(const std::string &s, const std::string &what)
{
    size_t n = 0;
    for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1))
        n++;
    return n;
}

class ApiError : public ::testing::Test {
  protected:
    void SetUp() override
    {
        CUcontext ctx;
        ASSERT_NO_FATAL_FAILURE(cu_face_enter(&ctx));
        opts("backtrace=0");
    }
    void TearDown() override
    {
        sp_reaper_drain(10000);
        sp_options_parse(nullptr);
    }
    void opts(const char *spec) { ASSERT_EQ(sp_options_parse(spec), 0) << spec; }
    sp_CUresult register_kernel_addr()
    {
        return shim("cuMemHostRegister_v2", {sp_api_ptr(kKernelAddr), sp_api_size(page()), sp_api_flags(0)},
                    [] {
                        return sp_cu_host_register(sp_cu.cuMemHostRegister_v2, "cuMemHostRegister_v2",
                                                   kKernelAddr, page(), 0);
                    });
    }
};

// The driver's error for the program's argument passes through unchanged,
// with one line naming the call, its arguments, the code and its name; it
// is counted, and it is no violation (strict mode ignores it).
TEST_F(ApiError, TheDriversAnswerToABadArgumentIsNamed)
{
    uint64_t n0 = api_errors(), v0 = sp_violations();
    testing::internal::CaptureStderr();
    int err = 0;
    sp_CUresult e = shim("cuMemHostRegister_v2",
                         {sp_api_ptr(kKernelAddr), sp_api_size(page()), sp_api_flags(0)}, [&] {
                             sp_CUresult r = sp_cu_host_register(sp_cu.cuMemHostRegister_v2,
                                                                 "cuMemHostRegister_v2",
                                                                 kKernelAddr, page(), 0);
                             errno = 1234; /* as the call leaves it: the line keeps it */
                             return r;
                         });
    err = errno;
    std::string out = testing::internal::GetCapturedStderr();
    EXPECT_EQ(e, sp_cu.cuMemHostRegister_v2(kKernelAddr, page(), 0)); /* the driver's own answer */
    EXPECT_NE(e, SP_CUDA_SUCCESS);
    std::string want = "safepin: api-error: cuMemHostRegister_v2(0xffff888000000000, " +
                       std::to_string(page()) + ", 0x0): CUDA_ERROR_INVALID_VALUE (1), the driver's";
    EXPECT_NE(out.find(want), std::string::npos) << out;
    EXPECT_EQ(count(out, "api-error:"), 1u) << out;
    EXPECT_EQ(api_errors() - n0, 1u);
    EXPECT_EQ(sp_violations(), v0);
    EXPECT_EQ(err, 1234); /* errno as the call left it */

    // A destroyed stream, and a NULL out-pointer.
    sp_CUstream s = nullptr;
    ASSERT_EQ(sp_cu_stream_create(&s, CU_STREAM_NON_BLOCKING, 0, 0), SP_CUDA_SUCCESS);
    ASSERT_EQ(sp_cu_stream_destroy(sp_cu.cuStreamDestroy_v2, s), SP_CUDA_SUCCESS);
    testing::internal::CaptureStderr();
    e = shim("cuStreamDestroy_v2", {sp_api_ptr(s)},
             [&] { return sp_cu_stream_destroy(sp_cu.cuStreamDestroy_v2, s); });
    sp_CUresult e2 = shim("cuStreamCreate", {sp_api_ptr(nullptr), sp_api_flags(0)},
                          [] { return sp_cu_stream_create(nullptr, 0, 0, 0); });
    out = testing::internal::GetCapturedStderr();
    EXPECT_NE(e, SP_CUDA_SUCCESS);
    EXPECT_NE(e2, SP_CUDA_SUCCESS);
    EXPECT_NE(out.find("api-error: cuStreamDestroy_v2(0x"), std::string::npos) << out;
    EXPECT_NE(out.find("(" + std::to_string(e) + "), the driver's"), std::string::npos) << out;
    EXPECT_NE(out.find("api-error: cuStreamCreate(NULL, 0x0): CUDA_ERROR_INVALID_VALUE (1)"),
              std::string::npos) << out;
}

// Where safepin said what it had to say (its own diagnostic for the call),
// no api-error line is added.
TEST_F(ApiError, NoLineWhereSafepinSaidItsOwn)
{
    char *p = static_cast<char *>(mmap(nullptr, page(), PROT_READ | PROT_WRITE,
                                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(p, MAP_FAILED);
    uint64_t n0 = api_errors();
    testing::internal::CaptureStderr();
    sp_CUresult e = shim("cuMemHostUnregister", {sp_api_ptr(p)}, [&] { return sp_cu_host_unregister(p); });
    std::string out = testing::internal::GetCapturedStderr();
    EXPECT_EQ(e, SP_CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    EXPECT_NE(out.find("unregister-unknown"), std::string::npos) << out;
    EXPECT_EQ(out.find("api-error"), std::string::npos) << out;
    EXPECT_EQ(api_errors(), n0);
    munmap(p, page());
}

// Not errors of the program's arguments: attribute queries of memory the
// driver does not know, look-ups of names it lacks, codes of the driver's
// state (NotReady, torn down, out of memory, an earlier illegal address);
// and calls made inside another hook (the runtime's or safepin's own).
TEST_F(ApiError, ProbesAndInnerCallsGetNoLine)
{
    char *p = static_cast<char *>(mmap(nullptr, page(), PROT_READ | PROT_WRITE,
                                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(p, MAP_FAILED);
    uint64_t n0 = api_errors();
    unsigned type = 0;
    void *fn = nullptr;
    int status = 0;
    testing::internal::CaptureStderr();
    sp_CUresult a = shim("cuPointerGetAttribute", {}, [&] {
        return sp_cu_pointer_get_attribute(&type, 2 /* MEMORY_TYPE */, (sp_CUdeviceptr)(uintptr_t)p);
    });
    sp_CUresult b = shim("cuGetProcAddress_v2", {}, [&] {
        return sp_cu_get_proc_address("cuNoSuchFunction", &fn, 12000, 0, &status, 1);
    });
    sp_api_call c;
    sp_api_enter(&c);
    sp_api_failed(&c, SP_RT_CUDA, "cuStreamQuery", "", SP_CUDA_ERROR_NOT_READY, nullptr, 0);
    sp_api_failed(&c, SP_RT_CUDA, "cuStreamDestroy_v2", "", SP_CUDA_ERROR_DEINITIALIZED, nullptr, 0);
    sp_api_failed(&c, SP_RT_CUDA, "cuStreamCreate", "", SP_CUDA_ERROR_OUT_OF_MEMORY, nullptr, 0);
    sp_api_failed(&c, SP_RT_CUDA, "cuStreamDestroy_v2", "", SP_CUDA_ERROR_ILLEGAL_ADDRESS, nullptr, 0);
    sp_CUresult inner = shim("cuMemHostRegister_v2", {}, [&] { return register_kernel_addr(); });
    sp_api_leave();
    std::string out = testing::internal::GetCapturedStderr();
    EXPECT_NE(a, SP_CUDA_SUCCESS); /* the driver does not know p: the probe's answer */
    EXPECT_NE(b, SP_CUDA_SUCCESS);
    EXPECT_NE(inner, SP_CUDA_SUCCESS);
    EXPECT_EQ(out.find("api-error"), std::string::npos) << out;
    EXPECT_EQ(api_errors(), n0);

    // The same query with nowhere to answer is the program's error.
    testing::internal::CaptureStderr();
    a = shim("cuPointerGetAttribute", {sp_api_ptr(nullptr)}, [&] {
        return sp_cu_pointer_get_attribute(nullptr, 2, (sp_CUdeviceptr)(uintptr_t)p);
    });
    out = testing::internal::GetCapturedStderr();
    EXPECT_NE(a, SP_CUDA_SUCCESS);
    EXPECT_NE(out.find("api-error: cuPointerGetAttribute(NULL)"), std::string::npos) << out;
    munmap(p, page());
}

// max_repeats caps the lines (all are counted); api_errors=0 turns them off.
TEST_F(ApiError, CappedByMaxRepeatsAndOffWithTheOption)
{
    uint64_t before = api_errors();
    std::string spec = "backtrace=0:max_repeats=" + std::to_string(before + 2);
    opts(spec.c_str());
    testing::internal::CaptureStderr();
    for (int i = 0; i < 4; i++)
        register_kernel_addr();
    std::string out = testing::internal::GetCapturedStderr();
    EXPECT_EQ(api_errors() - before, 4u);
    EXPECT_EQ(count(out, "api-error: cuMemHostRegister_v2("), 2u) << out;
    EXPECT_EQ(count(out, "further reports of this code are counted"), 1u) << out;

    opts("api_errors=0");
    uint64_t n0 = api_errors();
    testing::internal::CaptureStderr();
    EXPECT_NE(register_kernel_addr(), SP_CUDA_SUCCESS);
    out = testing::internal::GetCapturedStderr();
    EXPECT_EQ(out.find("api-error"), std::string::npos) << out;
    EXPECT_EQ(api_errors(), n0);
}

} // namespace
