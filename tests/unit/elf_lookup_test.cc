// elf_lookup_test.cc - interpose/elf_lookup.c against the dynamic linker's
// own answers: glibc's functions found in libc's table by exact version,
// a symbol's default definition, and the RTLD_NEXT search after an object.
// (This binary links safepin's core, not its exports: dlvsym here is
// glibc's.)
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <hip/hip_runtime_api.h>

#include "elf_lookup.h"

TEST(ElfLookup, GlibcFunctionsByExactVersion)
{
    void *want = dlvsym(RTLD_DEFAULT, "dlvsym", "GLIBC_2.34");
    ASSERT_NE(want, nullptr) << "this test expects glibc 2.34 or later";
    EXPECT_EQ(sp_elf_glibc_sym("dlvsym", "GLIBC_2.34"), want);
    EXPECT_EQ(sp_elf_glibc_sym("dlsym", "GLIBC_2.34"), dlvsym(RTLD_DEFAULT, "dlsym", "GLIBC_2.34"));
    EXPECT_EQ(sp_elf_glibc_sym("dlclose", "GLIBC_2.34"), dlvsym(RTLD_DEFAULT, "dlclose", "GLIBC_2.34"));
    // The older version of the same name is another definition, found as such.
    EXPECT_EQ(sp_elf_glibc_sym("dlsym", "GLIBC_2.2.5"), dlvsym(RTLD_DEFAULT, "dlsym", "GLIBC_2.2.5"));
    // The default definition is the one a plain reference binds to.
    EXPECT_EQ(sp_elf_glibc_sym("dlvsym", nullptr), want);
    // Versions and names libc does not have: nothing, never a guess.
    EXPECT_EQ(sp_elf_glibc_sym("dlvsym", "GLIBC_9.99"), nullptr);
    EXPECT_EQ(sp_elf_glibc_sym("dlvsym", "GLIBC_2.3"), nullptr);
    EXPECT_EQ(sp_elf_glibc_sym("sp_no_such_function", "GLIBC_2.34"), nullptr);
}

TEST(ElfLookup, DefinitionInTheObjectOfAnAddress)
{
    void *reg = dlvsym(RTLD_DEFAULT, "hipHostRegister", "hip_4.2"); // simhip's
    ASSERT_NE(reg, nullptr);
    EXPECT_EQ(sp_elf_sym_at(reg, "hipHostRegister", nullptr), reg);
    EXPECT_EQ(sp_elf_sym_at(reg, "hipHostRegister", "hip_4.2"), reg);
    EXPECT_EQ(sp_elf_sym_at(reg, "hipHostRegister", "hip_5.2"), nullptr);
    // Another function of the same object is found from any of its addresses.
    EXPECT_EQ(sp_elf_sym_at(reg, "hipHostUnregister", nullptr),
              dlvsym(RTLD_DEFAULT, "hipHostUnregister", "hip_4.2"));
    // An address in no object.
    int on_stack = 0;
    EXPECT_EQ(sp_elf_sym_at(&on_stack, "hipHostRegister", nullptr), nullptr);
}

TEST(ElfLookup, NextAfterTheCaller)
{
    void *reg = dlvsym(RTLD_DEFAULT, "hipHostRegister", "hip_4.2");
    ASSERT_NE(reg, nullptr);
    int n = sp_elf_count_objects();
    ASSERT_GT(n, 2);
    // From this program (the first object), the next definition is simhip's.
    void *self = reinterpret_cast<void *>(&sp_elf_count_objects);
    EXPECT_EQ(sp_elf_next_sym(self, n, nullptr, "hipHostRegister", "hip_4.2"), reg);
    EXPECT_EQ(sp_elf_next_sym(self, n, nullptr, "hipHostRegister", "hip_9.9"), nullptr);
    // The object that holds it passed over: none left.
    EXPECT_EQ(sp_elf_next_sym(self, n, reg, "hipHostRegister", "hip_4.2"), nullptr);
    // From simhip itself: nothing after it defines it.
    EXPECT_EQ(sp_elf_next_sym(reg, n, nullptr, "hipHostRegister", "hip_4.2"), nullptr);
    // A caller outside the start-up objects is not answered for.
    EXPECT_EQ(sp_elf_next_sym(self, 0, nullptr, "hipHostRegister", "hip_4.2"), nullptr);
}
