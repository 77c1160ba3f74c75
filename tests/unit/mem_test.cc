// mem_test.cc - the memory hooks' logic (free, munmap, mmap, mremap,
// madvise, shmdt) over registered memory, called directly (no LD_PRELOAD),
// on simhip. Real functions are wrapped to see when safepin makes its real
// calls: after the releases they must wait for (G2), never before, and
// never for a call the kernel refuses (G2, last sentence).
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>

#include <fcntl.h>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <unistd.h>

#include <hip/hip_runtime_api.h>

#include "backend.h"
#include "diag.h"
#include "hip.h"
#include "interpose.h"
#include "options.h"
#include "reaper.h"
#include "registry.h"
#include "simhip.h"

namespace {

const size_t PG = 4096;

sp_backend g_saved;
sp_hip_table g_saved_hip;
std::atomic<int> g_real_unregister{0}, g_unmaps{0}, g_madvises{0}, g_mremaps{0}, g_mmaps{0},
    g_shmdts{0};
// How many real unregisters had run when the call was made (-1: not made).
std::atomic<int> g_unreg_at_madvise{-1}, g_unreg_at_mremap{-1}, g_unreg_at_mmap{-1},
    g_unreg_at_shmdt{-1}, g_unmaps_at_mmap{-1};

hipError_t wrap_unregister(void *p)
{
    g_real_unregister++;
    return g_saved_hip.hipHostUnregister(p);
}

// The real munmap calls, in order (the first 16).
struct Unmap {
    uintptr_t addr;
    size_t len;
};
Unmap g_unmap_log[16];

int wrap_munmap(void *p, size_t n)
{
    int i = g_unmaps++;
    if (i < 16)
        g_unmap_log[i] = {(uintptr_t)p, n};
    return g_saved.munmap(p, n);
}

int wrap_madvise(void *p, size_t n, int advice)
{
    g_madvises++;
    g_unreg_at_madvise = g_real_unregister.load();
    return g_saved.madvise(p, n, advice);
}

void *wrap_mremap(void *old, size_t os, size_t ns, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    void *na = va_arg(ap, void *);
    va_end(ap);
    g_mremaps++;
    g_unreg_at_mremap = g_real_unregister.load();
    return g_saved.mremap(old, os, ns, flags, na);
}

void *wrap_mmap(void *a, size_t n, int prot, int flags, int fd, off_t off)
{
    if (flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)) {
        g_mmaps++;
        g_unreg_at_mmap = g_real_unregister.load();
        g_unmaps_at_mmap = g_unmaps.load();
    }
    return g_saved.mmap(a, n, prot, flags, fd, off);
}

int wrap_shmdt(const void *a)
{
    g_shmdts++;
    g_unreg_at_shmdt = g_real_unregister.load();
    return g_saved.shmdt(a);
}

// A kernel that holds its stream (and so every release) until the gate opens.
std::atomic<int> g_gate{0};
void kernel_gate(void *)
{
    while (!g_gate.load())
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

uint64_t waits() { return __atomic_load_n(&sp_stat.waits_for_release, __ATOMIC_RELAXED); }

// Opens the gate once a hook waits for a release (or after 5 s, so that a
// hook that does not wait shows as a failed expectation, not a hang).
std::thread open_gate_when_waiting()
{
    uint64_t before = waits();
    return std::thread([before] {
        for (int i = 0; i < 5000 && waits() == before; i++)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        g_gate = 1;
    });
}

bool mapped(const void *p, size_t len)
{
    unsigned char vec[64];
    return mincore(const_cast<void *>(p), len, vec) == 0;
}

bool state_of(const void *p, sp_range_state *st)
{
    sp_lock();
    sp_range *r = sp_reg_find((uintptr_t)p);
    bool found = r != nullptr;
    if (found)
        *st = r->state;
    sp_unlock();
    return found;
}

bool is_live(const void *p)
{
    sp_range_state st;
    return state_of(p, &st) && st == SP_RANGE_LIVE;
}

char *map_anon(size_t len)
{
    void *p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? nullptr : static_cast<char *>(p);
}

class Mem : public ::testing::Test {
protected:
    void SetUp() override
    {
        static bool once = false;
        if (!once) {
            sp_init();
            g_saved = sp_real;
            g_saved_hip = sp_hip;
            once = true;
        }
        ASSERT_EQ(sp_reaper_drain(5000), 0u);
        sp_real = g_saved;
        sp_hip = g_saved_hip;
        sp_hip.hipHostUnregister = wrap_unregister;
        sp_real.munmap = wrap_munmap;
        sp_real.madvise = wrap_madvise;
        sp_real.mremap = wrap_mremap;
        sp_real.mmap = wrap_mmap;
        sp_real.shmdt = wrap_shmdt;
        sp_lock();
        // Unregister returns at once: the release stays pending while the
        // gate holds the device.
        sp_opt.unreg_mode = SP_UNREG_ASYNC;
        sp_opt.revive = 1;
        sp_opt.log_level = SP_LOG_ERROR;
        sp_unlock();
        g_real_unregister = g_unmaps = g_madvises = g_mremaps = g_mmaps = g_shmdts = 0;
        g_unreg_at_madvise = g_unreg_at_mremap = g_unreg_at_mmap = g_unreg_at_shmdt = -1;
        g_unmaps_at_mmap = -1;
        g_gate = 0;
        ASSERT_EQ(sp_stream_create_with_flags(&nb, hipStreamNonBlocking), hipSuccess);
    }
    void TearDown() override
    {
        g_gate = 1;
        EXPECT_EQ(hipStreamSynchronize(nb), hipSuccess);
        EXPECT_EQ(sp_reaper_drain(5000), 0u);
        EXPECT_EQ(sp_stream_destroy(nb), hipSuccess);
        sp_real = g_saved;
        sp_hip = g_saved_hip;
    }
    uint64_t freed_while_registered()
    {
        return __atomic_load_n(&sp_stat.code_count[SP_FREED_WHILE_REGISTERED], __ATOMIC_RELAXED);
    }
    // Register p and hold every release behind a kernel until the gate opens.
    void register_held(void *p, size_t len)
    {
        ASSERT_EQ(sp_host_register(p, len, 0), hipSuccess);
        ASSERT_EQ(simhipLaunchKernel(nb, kernel_gate, nullptr), hipSuccess);
    }
    hipStream_t nb = nullptr;
};

} // namespace

// ---- item 8: fixed mmap in a host function -------------------------------

namespace {
struct CallbackMaps {
    char *live, *unregistered, *unmapped;
    size_t len;
    std::atomic<int> done{0};
    int ok = 0;
    int unmaps_in_callback = -1;
};

void remap_in_callback(hipStream_t, hipError_t, void *arg)
{
    CallbackMaps *c = static_cast<CallbackMaps *>(arg);
    // Unmapped here, so that its (deferred) unmap is still pending below:
    // the releases wait for a marker behind this callback.
    int ok = sp_munmap(c->unmapped, c->len) == 0 && g_unmaps.load() == 0;
    for (char *p : {c->live, c->unregistered, c->unmapped}) {
        void *q = sp_mmap(p, c->len, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        ok &= q == p;
    }
    c->ok = ok;
    c->unmaps_in_callback = g_unmaps.load();
    c->done = 1;
}
} // namespace

TEST_F(Mem, FixedMmapInAHostFunctionNeverWaits)
{
    static CallbackMaps c;
    c.len = 4 * PG;
    c.done = 0;
    c.live = map_anon(c.len);
    c.unregistered = map_anon(c.len);
    c.unmapped = map_anon(c.len);
    ASSERT_TRUE(c.live && c.unregistered && c.unmapped);
    for (char *p : {c.live, c.unregistered, c.unmapped})
        ASSERT_EQ(sp_host_register(p, c.len, 0), hipSuccess);
    ASSERT_EQ(sp_host_unregister(c.unregistered), hipSuccess);
    ASSERT_EQ(sp_stream_add_callback(nb, remap_in_callback, &c, 0), hipSuccess);
    ASSERT_EQ(hipStreamSynchronize(nb), hipSuccess);
    ASSERT_EQ(c.done.load(), 1);
    EXPECT_EQ(c.ok, 1);
    // The deferred unmap under the new mapping ran in the callback, before
    // the mapping; nothing unmaps the new mappings later.
    EXPECT_EQ(c.unmaps_in_callback, 1);
    for (char *p : {c.live, c.unregistered, c.unmapped}) {
        EXPECT_EQ(p[0], 0);
        memset(p, 7, c.len);
    }
    ASSERT_EQ(sp_reaper_drain(5000), 0u);
    EXPECT_EQ(g_real_unregister.load(), 3);
    EXPECT_EQ(g_unmaps.load(), 1);
    for (char *p : {c.live, c.unregistered, c.unmapped}) {
        ASSERT_TRUE(mapped(p, c.len));
        EXPECT_EQ(p[c.len - 1], 7);
        munmap(p, c.len);
    }
}

// ---- item 11: madvise --------------------------------------------------------

TEST_F(Mem, MadviseOnAPendingRangeWaitsForTheReleaseThenRuns)
{
    size_t len = 4 * PG;
    char *p = map_anon(len);
    ASSERT_NE(p, nullptr);
    memset(p, 1, len);
    register_held(p, len);
    ASSERT_EQ(sp_host_unregister(p), hipSuccess);
    std::thread opener = open_gate_when_waiting();
    EXPECT_EQ(sp_madvise(p, len, MADV_DONTNEED), 0);
    opener.join();
    EXPECT_EQ(g_unreg_at_madvise.load(), 1); // the real call came after the release
    EXPECT_EQ(p[0], 0);                      // its effect is there at once
    memset(p, 2, len);
    ASSERT_EQ(sp_reaper_drain(5000), 0u);
    EXPECT_EQ(g_madvises.load(), 1); // and nothing runs it again later
    EXPECT_EQ(p[0], 2);
    EXPECT_EQ(p[len - 1], 2);
    munmap(p, len);
}

TEST_F(Mem, MadviseOfNothingOrMisalignedDoesNothingNowOrLater)
{
    size_t len = 4 * PG;
    char *p = map_anon(len);
    ASSERT_NE(p, nullptr);
    memset(p, 3, len);
    register_held(p, len);
    ASSERT_EQ(sp_host_unregister(p), hipSuccess);
    uint64_t w = waits();
    EXPECT_EQ(sp_madvise(p, 0, MADV_DONTNEED), 0);
    errno = 0;
    EXPECT_EQ(sp_madvise(p + 1, PG, MADV_DONTNEED), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(waits(), w); // the kernel answered at once
    g_gate = 1;
    ASSERT_EQ(sp_reaper_drain(5000), 0u);
    EXPECT_EQ(p[0], 3);
    EXPECT_EQ(p[len - 1], 3);
    munmap(p, len);
}

// ---- item 12: mremap ---------------------------------------------------------

TEST_F(Mem, MremapOfAPendingRangeWaitsThenCallsTheRealOne)
{
    size_t len = 2 * PG;
    int fd = memfd_create("mem_test", 0);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(ftruncate(fd, 2 * len), 0);
    void *m = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ASSERT_NE(m, MAP_FAILED);
    char *a = static_cast<char *>(m);
    register_held(a, len);
    ASSERT_EQ(sp_host_unregister(a), hipSuccess);
    std::thread opener = open_gate_when_waiting();
    void *q = sp_mremap(a, len, 2 * len, MREMAP_MAYMOVE, nullptr);
    opener.join();
    ASSERT_NE(q, MAP_FAILED);
    EXPECT_EQ(g_unreg_at_mremap.load(), 1);
    EXPECT_EQ(g_mremaps.load(), 1);
    // The real mremap: still the file's pages.
    static_cast<char *>(q)[len] = 42;
    char v = 0;
    ASSERT_EQ(pread(fd, &v, 1, (off_t)len), 1);
    EXPECT_EQ(v, 42);
    ASSERT_EQ(sp_reaper_drain(5000), 0u);
    munmap(q, 2 * len);
    close(fd);
}

TEST_F(Mem, MremapThatRemovesNothingLeavesTheRegistration)
{
    size_t len = 2 * PG;
    int fd = memfd_create("mem_test", 0);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(ftruncate(fd, len), 0);
    void *m = mmap(nullptr, 2 * len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ASSERT_NE(m, MAP_FAILED);
    char *b = static_cast<char *>(m);
    ASSERT_EQ(sp_host_register(b, len, 0), hipSuccess);
    uint64_t fwr = freed_while_registered();
    // An alias (old_size 0) and a resize to the same size take nothing away.
    void *alias = sp_mremap(b, 0, len, MREMAP_MAYMOVE, nullptr);
    ASSERT_NE(alias, MAP_FAILED);
    EXPECT_TRUE(is_live(b));
    EXPECT_EQ(sp_mremap(b, len, len, MREMAP_MAYMOVE, nullptr), b);
    EXPECT_TRUE(is_live(b));
    EXPECT_EQ(freed_while_registered(), fwr);
    EXPECT_EQ(g_unmaps.load(), 0);
    EXPECT_EQ(sp_host_unregister(b), hipSuccess);
    ASSERT_EQ(sp_reaper_drain(5000), 0u);
    munmap(alias, len);
    munmap(b, 2 * len);
    close(fd);
}

// ---- item 13: what the kernel refuses ---------------------------------------

TEST_F(Mem, RefusedCallsChangeNoRegistration)
{
    size_t len = 4 * PG;
    char *p = map_anon(2 * len);
    ASSERT_NE(p, nullptr);
    ASSERT_EQ(mprotect(p + len, len, PROT_NONE), 0); // a second mapping after p's
    ASSERT_EQ(sp_host_register(p, len, 0), hipSuccess);
    uint64_t fwr = freed_while_registered();
    struct Case {
        const char *what;
        std::function<long()> call;
        int err;
    } cases[] = {
        {"munmap(p, 0)", [&] { return (long)sp_munmap(p, 0); }, EINVAL},
        {"munmap(p + 1)", [&] { return (long)sp_munmap(p + 1, PG); }, EINVAL},
#ifndef __SANITIZE_THREAD__
        // (TSan's munmap interceptor clears the shadow of the range before
        // the kernel answers, and crashes on one past the address space.)
        {"munmap(p, 1 << 62)", [&] { return (long)sp_munmap(p, (size_t)1 << 62); }, EINVAL},
#endif
        {"mmap(p + 1, MAP_FIXED)",
         [&] {
             return (long)sp_mmap(p + 1, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
         },
         EINVAL},
        {"mmap(p, 0, MAP_FIXED)",
         [&] {
             return (long)sp_mmap(p, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
         },
         EINVAL},
        {"mmap(p, MAP_FIXED, bad descriptor)",
         [&] { return (long)sp_mmap(p, PG, PROT_READ, MAP_SHARED | MAP_FIXED, 1000, 0); }, EBADF},
        {"mremap(p + 1)",
         [&] { return (long)sp_mremap(p + 1, PG, 2 * PG, MREMAP_MAYMOVE, nullptr); }, EINVAL},
        {"mremap(p, 0 new size)",
         [&] { return (long)sp_mremap(p, len, 0, MREMAP_MAYMOVE, nullptr); }, EINVAL},
        {"mremap(p, unknown flag)",
         [&] { return (long)sp_mremap(p, len, len, MREMAP_MAYMOVE | 0x80, nullptr); }, EINVAL},
        {"mremap(p, old_size past the mapping)",
         [&] { return (long)sp_mremap(p, 2 * len, 4 * len, MREMAP_MAYMOVE, nullptr); }, EFAULT},
        {"shmdt(p)", [&] { return (long)sp_shmdt(p); }, EINVAL},
    };
    for (const Case &c : cases) {
        errno = 0;
        EXPECT_EQ(c.call(), -1) << c.what;
        EXPECT_EQ(errno, c.err) << c.what;
        EXPECT_TRUE(is_live(p)) << c.what;
        EXPECT_EQ(freed_while_registered(), fwr) << c.what;
        EXPECT_TRUE(mapped(p, len)) << c.what;
    }
    EXPECT_EQ(sp_host_unregister(p), hipSuccess);
    ASSERT_EQ(sp_reaper_drain(5000), 0u);
    munmap(p, 2 * len);
}

TEST_F(Mem, MunmapUnmapsAtOnceWhatNoRegistrationHolds)
{
    // [0,4) plain, [4,8) a hole, [8,12) registered, [12,16) a hole.
    char *arena = map_anon(16 * PG);
    ASSERT_NE(arena, nullptr);
    munmap(arena + 4 * PG, 4 * PG);
    munmap(arena + 12 * PG, 4 * PG);
    char *reg = arena + 8 * PG;
    register_held(reg, 4 * PG);
    uint64_t fwr = freed_while_registered();
    ASSERT_EQ(sp_munmap(arena, 16 * PG), 0);
    EXPECT_EQ(freed_while_registered(), fwr + 1);
    // What no registration holds is unmapped now, as the kernel does it;
    // only the registered pages wait, so a mapping the program makes in
    // the rest meanwhile is never unmapped later.
    ASSERT_EQ(g_unmaps.load(), 2);
    EXPECT_EQ(g_unmap_log[0].addr, (uintptr_t)arena);
    EXPECT_EQ(g_unmap_log[0].len, 8 * PG);
    EXPECT_EQ(g_unmap_log[1].addr, (uintptr_t)arena + 12 * PG);
    EXPECT_EQ(g_unmap_log[1].len, 4 * PG);
    sp_lock();
    EXPECT_FALSE(sp_reaper_pending_overlaps((uintptr_t)arena, 8 * PG));
    EXPECT_TRUE(sp_reaper_pending_overlaps((uintptr_t)reg, 4 * PG));
    EXPECT_FALSE(sp_reaper_pending_overlaps((uintptr_t)arena + 12 * PG, 4 * PG));
    sp_unlock();
    EXPECT_TRUE(mapped(reg, 4 * PG)); // kept until its release
    // Unmapping it again is a no-op for pages already deferred.
    ASSERT_EQ(sp_munmap(reg, 4 * PG), 0);
    EXPECT_EQ(g_unmaps.load(), 2);
    g_gate = 1;
    ASSERT_EQ(sp_reaper_drain(5000), 0u);
    ASSERT_EQ(g_unmaps.load(), 3);
    EXPECT_EQ(g_unmap_log[2].addr, (uintptr_t)reg);
    EXPECT_EQ(g_unmap_log[2].len, 4 * PG);
}

// ---- item 14: MAP_FIXED_NOREPLACE ------------------------------------------

TEST_F(Mem, FixedNoReplaceWaitsForTheDeferredUnmap)
{
    size_t len = 4 * PG;
    char *p = map_anon(len);
    ASSERT_NE(p, nullptr);
    register_held(p, len);
    ASSERT_EQ(sp_munmap(p, len), 0); // forgot to unregister: unmap deferred
    EXPECT_EQ(g_unmaps.load(), 0);
    std::thread opener = open_gate_when_waiting();
    void *q = sp_mmap(p, len, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    opener.join();
    EXPECT_EQ(q, (void *)p);
    EXPECT_EQ(g_unreg_at_mmap.load(), 1);
    EXPECT_EQ(g_unmaps_at_mmap.load(), 1);
    ASSERT_EQ(sp_reaper_drain(5000), 0u);
    EXPECT_TRUE(mapped(p, len));
    EXPECT_EQ(g_unmaps.load(), 1);
    munmap(p, len);
}

// ---- item 15: shmdt ----------------------------------------------------------

TEST_F(Mem, ShmdtOfARegisteredSegmentReleasesItThenDetaches)
{
    size_t len = 4 * PG;
    int id = shmget(IPC_PRIVATE, len, IPC_CREAT | 0600);
    ASSERT_GE(id, 0);
    void *seg = shmat(id, nullptr, 0);
    shmctl(id, IPC_RMID, nullptr);
    ASSERT_NE(seg, (void *)-1);
    register_held(static_cast<char *>(seg) + PG, PG); // a registration inside it
    uint64_t fwr = freed_while_registered();
    errno = 0;
    EXPECT_EQ(sp_shmdt(static_cast<char *>(seg) + PG), -1); // not where it is attached
    EXPECT_EQ(errno, EINVAL);
    EXPECT_TRUE(is_live(static_cast<char *>(seg) + PG));
    std::thread opener = open_gate_when_waiting();
    EXPECT_EQ(sp_shmdt(seg), 0);
    opener.join();
    EXPECT_EQ(freed_while_registered(), fwr + 1);
    EXPECT_EQ(g_unreg_at_shmdt.load(), 1); // detached after the release
    EXPECT_EQ(g_shmdts.load(), 2);
    ASSERT_EQ(sp_reaper_drain(5000), 0u);
}

// ---- item 16: G7's rule for free ------------------------------------------

namespace {
// Ranges inserted straight into the registry: safepin's decision is what
// is tested, and heap pages cannot be pinned page-rounded under ASan
// (simhip pins by touching each page, and a page's first bytes may be a
// redzone there).
sp_range *insert_range(uintptr_t base, size_t len)
{
    sp_lock();
    sp_range *r = sp_reg_insert(base, len, 0, 0);
    sp_unlock();
    return r;
}

hipError_t fake_unregister(void *) { return hipSuccess; }
} // namespace

TEST_F(Mem, FreeReleasesOnlyRegistrationsTheBlockGivesUp)
{
    sp_hip.hipHostUnregister = fake_unregister;
    auto page_of = [](const void *p) { return (uintptr_t)p & ~(uintptr_t)(PG - 1); };
    auto page_end = [](const void *p, size_t n) {
        return ((uintptr_t)p + n + PG - 1) & ~(uintptr_t)(PG - 1);
    };
    // Two small blocks of one size in one page: a buffer, registered
    // page-rounded, and its neighbour (not at the page's start).
    const int K = 64;
    char *blocks[K];
    char *buf = nullptr, *neighbour = nullptr;
    for (int i = 0; i < K; i++)
        ASSERT_NE(blocks[i] = static_cast<char *>(malloc(512)), nullptr);
    for (int i = 0; i < K && !buf; i++)
        for (int j = 0; j < K && !buf; j++)
            if (i != j && page_of(blocks[i]) == page_of(blocks[j]) &&
                (uintptr_t)blocks[j] != page_of(blocks[j])) {
                buf = blocks[i];
                neighbour = blocks[j];
            }
    ASSERT_NE(buf, nullptr);
    uintptr_t base = page_of(buf);
    ASSERT_NE(insert_range(base, page_end(buf, 512) - base), nullptr);
    uint64_t fwr = freed_while_registered();
    sp_free(neighbour);
    EXPECT_TRUE(is_live((void *)base));
    EXPECT_EQ(freed_while_registered(), fwr);
    EXPECT_EQ(sp_host_unregister((void *)base), hipSuccess);
    ASSERT_EQ(sp_reaper_drain(5000), 0u);
    for (int i = 0; i < K; i++)
        if (blocks[i] != neighbour)
            free(blocks[i]);

    // A block that covers a whole page of a registration gives it up, even
    // without its base...
    char *big = static_cast<char *>(malloc(3 * PG));
    ASSERT_NE(big, nullptr);
    base = page_of(big) - PG;
    ASSERT_NE(insert_range(base, page_end(big, 3 * PG) - base), nullptr);
    sp_free(big);
    EXPECT_FALSE(is_live((void *)base));
    EXPECT_EQ(freed_while_registered(), fwr + 1);
    ASSERT_EQ(sp_reaper_drain(5000), 0u);

    // ...and so does one that contains a registration's base, however small.
    char *blk = static_cast<char *>(malloc(256));
    ASSERT_NE(blk, nullptr);
    ASSERT_NE(insert_range((uintptr_t)blk + 16, 64), nullptr);
    sp_free(blk);
    EXPECT_FALSE(is_live(blk + 16));
    EXPECT_EQ(freed_while_registered(), fwr + 2);
    ASSERT_EQ(sp_reaper_drain(5000), 0u);
}
