// cuGetProcAddress(_v2): the look-up dance cudart does (dlopen, dlsym of
// cuGetProcAddress_v2, the probe, "cuGetProcAddress" at 11030 and 12000,
// then base names by version and flags).
#include <dlfcn.h>
#include <string.h>

#include "sc_common.h"

typedef CUresult (*gpa_v1)(const char *, void **, int, cuuint64_t);
typedef CUresult (*gpa_v2)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

class SimcudaProcAddress : public ::testing::Test {
protected:
    void SetUp() override
    {
        h = dlopen("libcuda.so.1", RTLD_NOW);
        ASSERT_NE(h, nullptr) << dlerror();
        v2 = (gpa_v2)dlsym(h, "cuGetProcAddress_v2");
        ASSERT_NE(v2, nullptr);
    }
    void *sym(const char *n) { return dlsym(h, n); }
    void *ask(const char *name, int ver, cuuint64_t flags, CUresult want = CUDA_SUCCESS,
              CUdriverProcAddressQueryResult want_st = CU_GET_PROC_ADDRESS_SUCCESS)
    {
        void *fn = (void *)1;
        CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)9;
        EXPECT_EQ(v2(name, &fn, ver, flags, &st), want) << name << "@" << ver;
        EXPECT_EQ(st, want_st) << name << "@" << ver;
        return fn;
    }
    void *h = nullptr;
    gpa_v2 v2 = nullptr;
};

TEST_F(SimcudaProcAddress, TheCudartDance)
{
    // The probe: not the stub library's 34.
    void *fn = nullptr;
    EXPECT_EQ(v2("", &fn, 0, 0, nullptr), CUDA_ERROR_NOT_FOUND);
    // "cuGetProcAddress": the 4-argument form below 12000, _v2 from 12000.
    EXPECT_EQ(ask("cuGetProcAddress", 11030, 0), sym("cuGetProcAddress"));
    EXPECT_EQ(ask("cuGetProcAddress", 12000, 0), sym("cuGetProcAddress_v2"));
    gpa_v1 v1 = (gpa_v1)ask("cuGetProcAddress", 11030, 0);
    ASSERT_NE(v1, nullptr);
    EXPECT_EQ(v1("cuMemHostUnregister", &fn, 11030, 0), CUDA_SUCCESS);
    EXPECT_EQ(fn, sym("cuMemHostUnregister"));
}

TEST_F(SimcudaProcAddress, VersionsPickTheForm)
{
    EXPECT_EQ(ask("cuMemHostRegister", 6050, 0), sym("cuMemHostRegister_v2"));
    EXPECT_EQ(ask("cuMemHostRegister", 12000, 0), sym("cuMemHostRegister_v2"));
    EXPECT_EQ(ask("cuMemHostRegister", 4000, 0), sym("cuMemHostRegister"));
    EXPECT_EQ(ask("cuMemFree", 3020, 0), sym("cuMemFree_v2"));
    EXPECT_EQ(ask("cuMemFree", 2000, 0, CUDA_ERROR_NOT_FOUND,
                  CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT),
              nullptr);
    EXPECT_EQ(ask("cuPointerGetAttributes", 7000, 0), sym("cuPointerGetAttributes"));
    EXPECT_EQ(ask("cuGraphInstantiate", 10000, 0), sym("cuGraphInstantiate"));
    EXPECT_EQ(ask("cuGraphInstantiate", 11000, 0), sym("cuGraphInstantiate_v2"));
    EXPECT_EQ(ask("cuGraphInstantiate", 12000, 0), sym("cuGraphInstantiateWithFlags"));
    EXPECT_EQ(ask("cuStreamBeginCapture", 10000, 0), sym("cuStreamBeginCapture"));
    EXPECT_EQ(ask("cuStreamBeginCapture", 12000, 0), sym("cuStreamBeginCapture_v2"));
    EXPECT_EQ(ask("cuNoSuchFunction", 12000, 0, CUDA_ERROR_NOT_FOUND,
                  CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND),
              nullptr);
    // Exact names are not base names.
    EXPECT_EQ(ask("cuMemFree_v2", 12000, 0, CUDA_ERROR_NOT_FOUND,
                  CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND),
              nullptr);
}

TEST_F(SimcudaProcAddress, FlagsPickTheStreamForm)
{
    EXPECT_EQ(ask("cuEventRecord", 2000, 0), sym("cuEventRecord"));
    EXPECT_EQ(ask("cuEventRecord", 7000, 2), sym("cuEventRecord_ptsz"));
    EXPECT_EQ(ask("cuEventRecord", 12000, 1), sym("cuEventRecord"));
    EXPECT_EQ(ask("cuMemcpyHtoDAsync", 12000, 0), sym("cuMemcpyHtoDAsync_v2"));
    EXPECT_EQ(ask("cuMemcpyHtoDAsync", 12000, 2), sym("cuMemcpyHtoDAsync_v2_ptsz"));
    EXPECT_EQ(ask("cuStreamBeginCapture", 12000, 2), sym("cuStreamBeginCapture_v2_ptsz"));
    EXPECT_EQ(ask("cuLaunchHostFunc", 12000, 2), sym("cuLaunchHostFunc_ptsz"));
    EXPECT_EQ(ask("cuStreamAddCallback", 12000, 2), sym("cuStreamAddCallback_ptsz"));
    // No per-thread form: the one form there is.
    EXPECT_EQ(ask("cuMemHostUnregister", 12000, 2), sym("cuMemHostUnregister"));
    // Before the per-thread form existed: the legacy form.
    EXPECT_EQ(ask("cuEventRecord", 6050, 2), sym("cuEventRecord"));
}

TEST_F(SimcudaProcAddress, AnswersBeforeCuInitAndExportsOnlyTheDriver)
{
    EXPECT_EXIT(
        {
            void *fn = nullptr;
            if (v2("cuMemHostRegister", &fn, 12000, 0, nullptr) != CUDA_SUCCESS || !fn)
                _exit(2);
            _exit(0);
        },
        ::testing::ExitedWithCode(0), "");
    EXPECT_EQ(sym("hipHostRegister"), nullptr);
    EXPECT_EQ(sym("sh_init"), nullptr);
}
