// toy_face.cc - the toy runtime as a face of the process layer (face.h):
// its table, registered with SP_FACE from this folder alone, and tests that
// drive interpose/ through it: dlsym on a handle hands out the toy's shim
// for a name it hooks, dlclose makes it forget before and after, and the
// toy's runtime library (libtoy_rt.so, which its table points into) is
// followed through a dlclose and a reload. The "runtime's" real function
// is toyHostRegister in this binary (exported to the dynamic symbol table
// by the binary's build rule), and toyRtRegister in the library.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <atomic>
#include <cstring>

#include "face.h"

extern "C" {
// The toy runtime's own function, as a library of it would export it.
__attribute__((visibility("default"), noinline)) int toyHostRegister(void *p, unsigned long n)
{
    return p && n ? 0 : 41;
}
}

namespace {

constexpr int TOY_ORDER = 2; // its runtime slot (toy_test.cc)

std::atomic<int> forgets{0}, dlsym_asked{0}, late_inits{0};

// The shim safepin would export for toyHostRegister.
int toy_shim_register(void *, unsigned long) { return 0; }

void *toy_shim_for(const char *name)
{
    return std::strcmp(name, "toyHostRegister") == 0 ? reinterpret_cast<void *>(toy_shim_register)
                                                      : nullptr;
}

void *toy_dlsym(void *, const char *name, void *p)
{
    dlsym_asked++;
    void *shim = toy_shim_for(name);
    return shim && shim != p ? shim : nullptr;
}

void toy_forget() { forgets++; }

// The toy's table of real functions: one slot, in libtoy_rt.so.
std::atomic<void *> toy_rt_fn{nullptr};
std::atomic<int> lib_forgets{0}, lib_fills{0};
void *toy_lib_fn() { return toy_rt_fn.load(); }
void toy_lib_forget(void *next)
{
    lib_forgets++;
    toy_rt_fn = next ? dlsym(next, "toyRtRegister") : nullptr;
}
void toy_lib_fill(void *h)
{
    lib_fills++;
    if (!toy_rt_fn.load())
        toy_rt_fn = dlsym(h, "toyRtRegister");
}

// A second face, defined first and started later (a larger order): the
// process layer walks faces by order, not by where the linker put them.
void late_init() { late_inits++; }
const sp_face toy_late_face = {
    "toy-late", 9, "toylate", late_init, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
};
SP_FACE(toy_late_face);

const sp_face toy_face = {
    "toy", TOY_ORDER, "toy", nullptr, toy_shim_for, toy_dlsym, nullptr, toy_forget, nullptr,
    toy_lib_fn, toy_lib_forget, toy_lib_fill, nullptr,
};
SP_FACE(toy_face);

TEST(ToyFace, TheProcessLayerWalksTheFacesByOrder)
{
    const sp_face *faces[SP_FACES_MAX];
    int n = sp_faces(faces, SP_FACES_MAX);
    ASSERT_EQ(n, 2);
    EXPECT_STREQ(faces[0]->name, "toy");
    EXPECT_STREQ(faces[1]->name, "toy-late");
}

TEST(ToyFace, DlsymOnAHandleHandsOutTheToysShim)
{
    void *h = dlopen(nullptr, RTLD_LAZY);
    ASSERT_NE(h, nullptr);
    void *real = dlsym(h, "toyHostRegister");
    ASSERT_EQ(real, reinterpret_cast<void *>(toyHostRegister)) << "the build rule exports it";
    int asked = dlsym_asked;
    EXPECT_EQ(sp_dlsym(h, "toyHostRegister", nullptr), reinterpret_cast<void *>(toy_shim_register));
    EXPECT_GT(dlsym_asked, asked);
    // A name no face hooks is glibc's answer; RTLD_DEFAULT is never redirected.
    EXPECT_EQ(sp_dlsym(h, "strlen", nullptr), dlsym(h, "strlen"));
    EXPECT_EQ(sp_dlsym(RTLD_DEFAULT, "toyHostRegister", nullptr), real);
    // A name the handle lacks: NULL, as glibc answers.
    EXPECT_EQ(sp_dlsym(h, "toyNoSuchFunction", nullptr), nullptr);
    dlclose(h);
}

TEST(ToyFace, DlcloseMakesTheToyForgetBeforeAndAfter)
{
    void *h = dlopen(nullptr, RTLD_LAZY);
    ASSERT_NE(h, nullptr);
    int before = forgets;
    EXPECT_EQ(sp_dlclose(h), 0);
    EXPECT_EQ(forgets, before + 2);
}

TEST(ToyFace, TheToysRuntimeLibraryIsFollowedThroughDlcloseAndReload)
{
    void *h = dlopen(TOY_RT_PATH, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(h, nullptr) << dlerror();
    toy_rt_fn = dlsym(h, "toyRtRegister");
    ASSERT_NE(toy_rt_fn.load(), nullptr);
    int forgot = lib_forgets;
    // Control: closing another object leaves the toy's table alone.
    void *self = dlopen(nullptr, RTLD_LAZY);
    EXPECT_EQ(sp_dlclose(self), 0);
    EXPECT_EQ(lib_forgets, forgot);
    EXPECT_NE(toy_rt_fn.load(), nullptr);
    // The program closes the toy's library (no work pending: it is
    // unloaded at once): the table is emptied, never left pointing there.
    EXPECT_EQ(sp_dlclose(h), 0);
    EXPECT_EQ(lib_forgets, forgot + 1);
    EXPECT_EQ(toy_rt_fn.load(), nullptr);
    Dl_info di;
    // A reload: the face's table is filled from the new instance.
    void *h2 = dlopen(TOY_RT_PATH, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(h2, nullptr);
    toy_lib_fill(h2);
    ASSERT_NE(toy_rt_fn.load(), nullptr);
    EXPECT_NE(dladdr(toy_rt_fn.load(), &di), 0);
    EXPECT_EQ(sp_dlclose(h2), 0);
    EXPECT_EQ(lib_forgets, forgot + 2);
    EXPECT_EQ(toy_rt_fn.load(), nullptr);
}

} // namespace
