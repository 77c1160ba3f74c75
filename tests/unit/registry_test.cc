// registry_test.cc - unit tests of the range registry (registry/registry.c).
//
// The registry never touches the memory it describes, so the tests use made
// up addresses. Every test starts from sp_reg_reset(); RegistryTest holds the
// process lock (sp_lock) for the whole test body (the functions under test require
// it), RegistryThreadTest leaves locking to the threads it starts.
#include <gtest/gtest.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <random>
#include <thread>
#include <vector>

#include "hip.h"
#include "interpose.h"
#include "registry.h"

namespace {

constexpr uintptr_t kArena = 0x7f0000000000ULL;
constexpr size_t kMiB = 1024 * 1024;

uint64_t NowNs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + ts.tv_nsec;
}

class RegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sp_mem_set_fail_hook(nullptr);
    sp_reg_reset();
    sp_lock();
  }
  void TearDown() override {
    sp_unlock();
    sp_mem_set_fail_hook(nullptr);
    sp_reg_reset();
  }
};

class RegistryThreadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sp_mem_set_fail_hook(nullptr);
    sp_reg_reset();
  }
  void TearDown() override {
    sp_mem_set_fail_hook(nullptr);
    sp_reg_reset();
  }
};

// Walks the registry in address order and compares it with the model.
void ExpectMatchesModel(const std::map<uintptr_t, size_t>& model) {
  ASSERT_EQ(sp_reg_check(), 0);
  ASSERT_EQ(sp_reg_count(), model.size());
  sp_range* r = sp_reg_find_overlap(0, SIZE_MAX);
  for (const auto& [base, size] : model) {
    ASSERT_NE(r, nullptr);
    ASSERT_EQ(r->base, base);
    ASSERT_EQ(r->size, size);
    r = sp_reg_next(r);
  }
  EXPECT_EQ(r, nullptr);
}

int Collect(sp_range* r, void* arg) {
  static_cast<std::vector<uintptr_t>*>(arg)->push_back(r->base);
  return 0;
}

struct StopAfter {
  int left;
  int calls;
};

int StopAfterN(sp_range*, void* arg) {
  auto* s = static_cast<StopAfter*>(arg);
  s->calls++;
  return --s->left == 0 ? 42 : 0;
}

// ---------------------------------------------------------------------------

TEST_F(RegistryTest, EmptyRegistryAnswersNothing) {
  EXPECT_EQ(sp_reg_count(), 0u);
  EXPECT_EQ(sp_reg_find(kArena), nullptr);
  EXPECT_EQ(sp_reg_find_overlap(0, SIZE_MAX), nullptr);
  EXPECT_EQ(sp_reg_find_containing(kArena), nullptr);
  EXPECT_EQ(sp_reg_maybe(kArena, 4096), 0);
  EXPECT_EQ(sp_reg_maybe(0, SIZE_MAX), 0);
  EXPECT_EQ(sp_reg_maybe(UINTPTR_MAX, SIZE_MAX), 0);
  std::vector<uintptr_t> seen;
  EXPECT_EQ(sp_reg_for_each(Collect, &seen), 0);
  EXPECT_TRUE(seen.empty());
}

TEST_F(RegistryTest, InsertFindRemove) {
  // A far-away range keeps the registry non-empty, so that sp_reg_maybe's
  // answers below come from its per-region counters.
  sp_range* far = sp_reg_insert(kArena + (1ULL << 30), 4096, 0, 0);
  ASSERT_NE(far, nullptr);
  EXPECT_EQ(sp_reg_maybe(kArena + 100, 1), 0);

  sp_range* r = sp_reg_insert(kArena, 8192, 3, 1);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->base, kArena);
  EXPECT_EQ(r->size, 8192u);
  EXPECT_EQ(r->flags, 3u);
  EXPECT_EQ(r->device, 1);
  EXPECT_EQ(r->nest, 1);
  EXPECT_EQ(r->state, SP_RANGE_LIVE);
  EXPECT_GT(r->id, far->id);
  EXPECT_EQ(r->freed, 0u);
  for (unsigned char b : r->part) EXPECT_EQ(b, 0);  // the layers' room starts zeroed
  EXPECT_EQ(sp_reg_count(), 2u);
  EXPECT_EQ(sp_reg_find(kArena), r);
  EXPECT_EQ(sp_reg_find(kArena + 1), nullptr);  // exact base only
  EXPECT_EQ(sp_reg_find_containing(kArena + 8191), r);
  EXPECT_EQ(sp_reg_maybe(kArena + 100, 1), 1);

  sp_range* s = sp_reg_insert(kArena + 8192, 100, 0, 0);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(sp_reg_count(), 3u);
  sp_reg_remove(r);
  EXPECT_EQ(sp_reg_count(), 2u);
  EXPECT_EQ(sp_reg_find(kArena), nullptr);
  EXPECT_EQ(sp_reg_find_containing(kArena), nullptr);
  EXPECT_EQ(sp_reg_find(kArena + 8192), s);
  sp_reg_remove(s);
  EXPECT_EQ(sp_reg_count(), 1u);
  EXPECT_EQ(sp_reg_find_overlap(0, SIZE_MAX), far);
  EXPECT_EQ(sp_reg_maybe(kArena + 100, 1), 0);
  EXPECT_EQ(sp_reg_check(), 0);
  sp_reg_remove(far);
  EXPECT_EQ(sp_reg_count(), 0u);
}

TEST_F(RegistryTest, IdsIncreaseAcrossRemoveAndReset) {
  uint64_t last = 0;
  for (int i = 0; i < 10; i++) {
    sp_range* r = sp_reg_insert(kArena, 4096, 0, 0);
    ASSERT_NE(r, nullptr);
    EXPECT_GT(r->id, last);
    last = r->id;
    sp_reg_remove(r);
  }
  sp_unlock();
  sp_reg_reset();
  sp_lock();
  sp_range* r = sp_reg_insert(kArena, 4096, 0, 0);
  ASSERT_NE(r, nullptr);
  EXPECT_GT(r->id, last);
}

TEST_F(RegistryTest, RefusesOverlappingInsert) {
  const uintptr_t b = kArena + 0x10000;
  sp_range* r = sp_reg_insert(b, 0x1000, 0, 0);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(sp_reg_insert(b, 0x1000, 0, 0), nullptr);       // same
  EXPECT_EQ(sp_reg_insert(b, 1, 0, 0), nullptr);            // first byte
  EXPECT_EQ(sp_reg_insert(b + 0xfff, 1, 0, 0), nullptr);    // last byte
  EXPECT_EQ(sp_reg_insert(b + 0x800, 0x10, 0, 0), nullptr); // interior
  EXPECT_EQ(sp_reg_insert(b - 1, 2, 0, 0), nullptr);        // straddles start
  EXPECT_EQ(sp_reg_insert(b + 0xfff, 2, 0, 0), nullptr);    // straddles end
  EXPECT_EQ(sp_reg_insert(b - 0x1000, 0x3000, 0, 0), nullptr);  // contains
  EXPECT_EQ(sp_reg_insert(b + 0x10, 0, 0, 0), nullptr);     // size 0
  EXPECT_EQ(sp_reg_insert(UINTPTR_MAX - 10, 12, 0, 0), nullptr);  // wraps
  EXPECT_EQ(sp_reg_count(), 1u);
  // Touching, not overlapping: accepted.
  EXPECT_NE(sp_reg_insert(b - 0x1000, 0x1000, 0, 0), nullptr);
  EXPECT_NE(sp_reg_insert(b + 0x1000, 0x1000, 0, 0), nullptr);
  // A range ending exactly at the top of the address space is fine.
  EXPECT_NE(sp_reg_insert(UINTPTR_MAX - 9, 10, 0, 0), nullptr);
  EXPECT_EQ(sp_reg_count(), 4u);
  EXPECT_EQ(sp_reg_find(b), r);
}

TEST_F(RegistryTest, AdjacentRangesSharingAPageAreDistinct) {
  const uintptr_t page = kArena + 0x40000;
  sp_range* a = sp_reg_insert(page, 0x800, 0, 0);
  sp_range* b = sp_reg_insert(page + 0x800, 0x800, 0, 0);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(a, b);
  EXPECT_EQ(sp_reg_find_overlap(page + 0x7ff, 1), a);
  EXPECT_EQ(sp_reg_find_overlap(page + 0x800, 1), b);
  EXPECT_EQ(sp_reg_find_overlap(page + 0x7ff, 2), a);  // lowest of both
  EXPECT_EQ(sp_reg_find_containing(page + 0x7ff), a);
  EXPECT_EQ(sp_reg_find_containing(page + 0x800), b);
  EXPECT_EQ(sp_reg_find_containing(page + 0x1000), nullptr);
  EXPECT_EQ(sp_reg_next(a), b);
  EXPECT_EQ(sp_reg_next(b), nullptr);
  sp_reg_remove(a);
  EXPECT_EQ(sp_reg_find_overlap(page, 0x800), nullptr);
  EXPECT_EQ(sp_reg_find_overlap(page, 0x801), b);
}

TEST_F(RegistryTest, FindOverlapBoundaries) {
  const uintptr_t b = kArena + 0x100000;
  const size_t s = 0x3000;
  sp_range* r = sp_reg_insert(b, s, 0, 0);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(sp_reg_find_overlap(b - 10, 10), nullptr);  // ends at b-1
  EXPECT_EQ(sp_reg_find_overlap(b - 10, 11), r);        // reaches b
  EXPECT_EQ(sp_reg_find_overlap(b + s - 1, 1), r);
  EXPECT_EQ(sp_reg_find_overlap(b + s, 100), nullptr);
  EXPECT_EQ(sp_reg_find_overlap(b, 0), r);              // len 0 counts as 1
  EXPECT_EQ(sp_reg_find_overlap(b - 1, 0), nullptr);
  EXPECT_EQ(sp_reg_find_overlap(b + s, 0), nullptr);
  EXPECT_EQ(sp_reg_find_overlap(0, SIZE_MAX), r);
  EXPECT_EQ(sp_reg_find_overlap(b + 1, SIZE_MAX), r);   // clipped at the top
  EXPECT_EQ(sp_reg_find_overlap(UINTPTR_MAX, SIZE_MAX), nullptr);

  sp_range* lower = sp_reg_insert(b - 0x10000, 0x100, 0, 0);
  sp_range* upper = sp_reg_insert(b + 0x10000, 0x100, 0, 0);
  ASSERT_NE(lower, nullptr);
  ASSERT_NE(upper, nullptr);
  EXPECT_EQ(sp_reg_find_overlap(b - 0x20000, 0x40000), lower);
  EXPECT_EQ(sp_reg_find_overlap(b - 0xff00, 0x40000), r);
  EXPECT_EQ(sp_reg_find_overlap(b + s, 0x40000), upper);
}

TEST_F(RegistryTest, FindContaining) {
  sp_range* r = sp_reg_insert(kArena + 0x5000, 0x2000, 0, 0);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(sp_reg_find_containing(kArena + 0x4fff), nullptr);
  EXPECT_EQ(sp_reg_find_containing(kArena + 0x5000), r);
  EXPECT_EQ(sp_reg_find_containing(kArena + 0x6fff), r);
  EXPECT_EQ(sp_reg_find_containing(kArena + 0x7000), nullptr);
  EXPECT_EQ(sp_reg_find_containing(0), nullptr);
  EXPECT_EQ(sp_reg_find_containing(UINTPTR_MAX), nullptr);
}

TEST_F(RegistryTest, ForOverlapsInAddressOrderAndStopsEarly) {
  std::vector<uintptr_t> bases;
  for (int i = 0; i < 50; i++) bases.push_back(kArena + i * 0x2000);
  std::mt19937_64 rng(7);
  std::shuffle(bases.begin(), bases.end(), rng);
  for (uintptr_t b : bases) ASSERT_NE(sp_reg_insert(b, 0x1000, 0, 0), nullptr);

  // [range 10 + 0xfff, range 20 + 1): touches ranges 10..20.
  std::vector<uintptr_t> seen;
  EXPECT_EQ(sp_reg_for_overlaps(kArena + 10 * 0x2000 + 0xfff,
                                10 * 0x2000 + 2, Collect, &seen), 0);
  ASSERT_EQ(seen.size(), 11u);
  for (int i = 0; i < 11; i++) EXPECT_EQ(seen[i], kArena + (10 + i) * 0x2000);

  // Only the gap: nothing.
  seen.clear();
  EXPECT_EQ(sp_reg_for_overlaps(kArena + 0x1000, 0x1000, Collect, &seen), 0);
  EXPECT_TRUE(seen.empty());

  StopAfter stop = {3, 0};
  EXPECT_EQ(sp_reg_for_overlaps(kArena, SIZE_MAX, StopAfterN, &stop), 42);
  EXPECT_EQ(stop.calls, 3);

  seen.clear();
  EXPECT_EQ(sp_reg_for_each(Collect, &seen), 0);
  EXPECT_EQ(seen.size(), 50u);
  std::vector<uintptr_t> sorted = bases;
  std::sort(sorted.begin(), sorted.end());
  std::vector<uintptr_t> got = seen;
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, sorted);
  stop = {5, 0};
  EXPECT_EQ(sp_reg_for_each(StopAfterN, &stop), 42);
  EXPECT_EQ(stop.calls, 5);
}

TEST_F(RegistryTest, NextWalksInAddressOrder) {
  std::map<uintptr_t, size_t> model;
  std::mt19937_64 rng(11);
  for (int i = 0; i < 300; i++) {
    uintptr_t b = kArena + (rng() % 100000) * 0x100;
    size_t s = 1 + rng() % 0x300;
    bool overlaps = false;
    for (const auto& [mb, ms] : model)
      if (b < mb + ms && mb < b + s) overlaps = true;
    sp_range* r = sp_reg_insert(b, s, 0, 0);
    EXPECT_EQ(r == nullptr, overlaps) << std::hex << b << " " << s;
    if (r) model[b] = s;
  }
  ASSERT_GT(model.size(), 100u);
  ExpectMatchesModel(model);
}

TEST_F(RegistryTest, SequentialInsertsKeepTheTreeBalanced) {
  std::map<uintptr_t, size_t> model;
  for (int i = 0; i < 10000; i++) {  // ascending
    ASSERT_NE(sp_reg_insert(kArena + i * 0x1000, 0x1000, 0, 0), nullptr);
    model[kArena + i * 0x1000] = 0x1000;
  }
  ExpectMatchesModel(model);
  for (int i = 20000; i >= 10000; i--) {  // descending, adjacent
    ASSERT_NE(sp_reg_insert(kArena + i * 0x1000, 0x1000, 0, 0), nullptr);
    model[kArena + i * 0x1000] = 0x1000;
  }
  ExpectMatchesModel(model);
  for (int i = 0; i <= 20000; i += 2) {  // every other one
    sp_reg_remove(sp_reg_find(kArena + i * 0x1000));
    model.erase(kArena + i * 0x1000);
    if (i % 5000 == 0) {
      ASSERT_EQ(sp_reg_check(), 0) << i;
    }
  }
  ExpectMatchesModel(model);
  for (int i = 20000 - 1; i > 0; i -= 2) {  // the rest, from the top
    sp_reg_remove(sp_reg_find(kArena + i * 0x1000));
    model.erase(kArena + i * 0x1000);
    if (i % 4999 == 0) {
      ASSERT_EQ(sp_reg_check(), 0) << i;
    }
  }
  ExpectMatchesModel(model);
  EXPECT_EQ(sp_reg_count(), 0u);
}

TEST_F(RegistryTest, HundredThousandRanges) {
  constexpr size_t kN = 100000;
  constexpr uintptr_t kStride = 0x4000;
  std::mt19937_64 rng(12345);
  std::vector<size_t> order(kN);
  for (size_t i = 0; i < kN; i++) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);

  std::vector<uintptr_t> base(kN);
  std::vector<size_t> size(kN);
  std::map<uintptr_t, size_t> model;
  for (size_t i : order) {
    base[i] = kArena + i * kStride + (rng() % 4) * 0x100;
    size[i] = 1 + rng() % 0x3000;
    ASSERT_NE(sp_reg_insert(base[i], size[i], 0, 0), nullptr);
    model[base[i]] = size[i];
  }
  ASSERT_EQ(sp_reg_count(), kN);
  ExpectMatchesModel(model);
  for (size_t i = 0; i < kN; i++) {
    sp_range* r = sp_reg_find(base[i]);
    ASSERT_NE(r, nullptr);
    ASSERT_EQ(r->size, size[i]);
    ASSERT_EQ(sp_reg_find_containing(base[i] + size[i] - 1), r);
    ASSERT_EQ(sp_reg_find_containing(base[i] + size[i]), nullptr);
    ASSERT_EQ(sp_reg_find_overlap(base[i] - 1, 2), r);
    ASSERT_EQ(sp_reg_find_overlap(base[i] - 1, 1), nullptr);
    ASSERT_EQ(sp_reg_maybe(base[i], size[i]), 1);
  }

  std::shuffle(order.begin(), order.end(), rng);
  for (size_t k = 0; k < kN; k++) {
    size_t i = order[k];
    sp_range* r = sp_reg_find(base[i]);
    ASSERT_NE(r, nullptr);
    sp_reg_remove(r);
    model.erase(base[i]);
    ASSERT_EQ(sp_reg_find_containing(base[i]), nullptr);
    if (k == kN / 2 + 7) ExpectMatchesModel(model);
  }
  EXPECT_EQ(sp_reg_count(), 0u);
  EXPECT_EQ(sp_reg_find_overlap(0, SIZE_MAX), nullptr);
  EXPECT_EQ(sp_reg_maybe(kArena, kN * kStride), 0);
}

// sp_reg_maybe against a brute-force model: never a false 0; and the tree
// answers exactly as the model does.
TEST_F(RegistryTest, MaybeNeverAnswersAFalseZero) {
  struct R {
    uintptr_t b;
    size_t s;
  };
  std::vector<R> live;
  std::mt19937_64 rng(2024);
  auto rnd_size = [&]() -> size_t {
    unsigned k = rng() % 100;
    if (k < 70) return 1 + rng() % (64 * 1024);
    if (k < 95) return 1 + rng() % (8 * kMiB);
    return 128 * kMiB + rng() % (1024 * kMiB);  // "huge"
  };
  auto overlaps = [&](uintptr_t a, size_t len) {
    uintptr_t last = a + (len ? len : 1) - 1;
    for (const R& r : live)
      if (a <= r.b + r.s - 1 && r.b <= last) return true;
    return false;
  };
  int positives = 0, zeros = 0;
  for (int step = 0; step < 3000; step++) {
    if (live.empty() || rng() % 100 < 55) {
      uintptr_t b = kArena + (rng() % (64ULL << 30));
      size_t s = rnd_size();
      bool expect_refused = overlaps(b, s);
      sp_range* r = sp_reg_insert(b, s, 0, 0);
      ASSERT_EQ(r == nullptr, expect_refused);
      if (r) live.push_back({b, s});
    } else {
      size_t k = rng() % live.size();
      sp_range* r = sp_reg_find(live[k].b);
      ASSERT_NE(r, nullptr);
      sp_reg_remove(r);
      live[k] = live.back();
      live.pop_back();
    }
    ASSERT_EQ(sp_reg_count(), live.size());
    if (step % 100 == 0) {
      ASSERT_EQ(sp_reg_check(), 0) << step;
    }
    for (int q = 0; q < 20; q++) {
      uintptr_t a;
      if (!live.empty() && rng() % 2) {
        const R& r = live[rng() % live.size()];
        a = r.b - 4 * kMiB + rng() % (r.s + 8 * kMiB);
      } else {
        a = kArena + (rng() % (66ULL << 30)) - (1ULL << 30);
      }
      size_t lens[] = {0, 1, 4096, 1 + rng() % (3 * kMiB), rng() % (64 * kMiB)};
      size_t len = lens[rng() % 5];
      bool truth = overlaps(a, len);
      int m = sp_reg_maybe(a, len);
      if (truth) {
        ASSERT_EQ(m, 1) << std::hex << a << " " << len;
        positives++;
      } else if (m == 0) {
        zeros++;
      }
      sp_range* f = sp_reg_find_overlap(a, len);
      ASSERT_EQ(f != nullptr, truth);
    }
  }
  EXPECT_GT(positives, 1000);
  EXPECT_GT(zeros, 1000);  // the filter filters something
  for (const R& r : live) sp_reg_remove(sp_reg_find(r.b));
  live.clear();
  EXPECT_EQ(sp_reg_maybe(kArena, 64ULL << 30), 0);
}

// With 10,000 small ranges live, memory elsewhere still gets a cheap 0.
TEST_F(RegistryTest, MaybeFiltersWithManyRanges) {
  for (int i = 0; i < 10000; i++)
    ASSERT_NE(sp_reg_insert(kArena + i * 0x3000, 0x1000, 0, 0), nullptr);
  ASSERT_NE(sp_reg_insert(0x100000000000ULL, 1ULL << 30, 0, 0), nullptr);  // huge
  EXPECT_EQ(sp_reg_maybe(kArena + 5000 * 0x3000 + 10, 1), 1);
  EXPECT_EQ(sp_reg_maybe(0x100000000000ULL + (512 * kMiB), 64), 1);
  int zeros = 0;
  for (int i = 0; i < 1000; i++)  // heap-like addresses, far away
    zeros += sp_reg_maybe(0x555555000000ULL + i * 0x10000, 64) == 0;
  EXPECT_GT(zeros, 950);
  // Once the huge range goes, its span answers 0 again.
  sp_reg_remove(sp_reg_find(0x100000000000ULL));
  EXPECT_EQ(sp_reg_maybe(0x100000000000ULL + (512 * kMiB), 64), 0);
  // ... also after another huge range appears elsewhere.
  ASSERT_NE(sp_reg_insert(0x200000000000ULL, 1ULL << 30, 0, 0), nullptr);
  EXPECT_EQ(sp_reg_maybe(0x200000000000ULL + (512 * kMiB), 64), 1);
  EXPECT_EQ(sp_reg_maybe(0x100000000000ULL + (512 * kMiB), 64), 0);
  EXPECT_EQ(sp_reg_check(), 0);
}

TEST_F(RegistryTest, ResetForgetsEverything) {
  for (int i = 0; i < 100; i++)
    ASSERT_NE(sp_reg_insert(kArena + i * 0x10000, 0x1000, 0, 0), nullptr);
  ASSERT_NE(sp_reg_insert(0x100000000000ULL, 1ULL << 30, 0, 0), nullptr);
  uint64_t tok = sp_reg_op_begin(kArena, 0x1000);
  ASSERT_GT(tok, 0u);
  sp_unlock();
  sp_reg_reset();
  EXPECT_EQ(sp_reg_count(), 0u);
  EXPECT_EQ(sp_reg_maybe(kArena, 0x1000), 0);
  EXPECT_EQ(sp_reg_maybe(0x100000000000ULL + 4096, 1), 0);
  sp_lock();  // the lock works after reset
  EXPECT_EQ(sp_reg_find(kArena), nullptr);
  EXPECT_EQ(sp_reg_find_overlap(0, SIZE_MAX), nullptr);
  // The op is gone: an overlapping op does not wait for it.
  uint64_t tok2 = sp_reg_op_begin(kArena, 0x1000);
  EXPECT_GT(tok2, 0u);
  sp_reg_op_end(tok2);
  EXPECT_NE(sp_reg_insert(kArena, 0x1000, 0, 0), nullptr);
  EXPECT_EQ(sp_reg_count(), 1u);
}

TEST_F(RegistryTest, MemoryPerRangeIsSmall) {
  // The range itself, glibc's chunk header, and about one bucket (16 bytes)
  // of the uthash table per item must fit in 256 bytes.
  EXPECT_LE(sizeof(sp_range) + 16 + sizeof(UT_hash_bucket), 256u);
  void* p = sp_mem_calloc(4, 8);
  ASSERT_NE(p, nullptr);
  for (int i = 0; i < 32; i++) EXPECT_EQ(static_cast<char*>(p)[i], 0);
  sp_mem_free(p);
  sp_mem_free(nullptr);
}

// --- out of memory ---------------------------------------------------------

int FailRangeAlloc(size_t n) { return n == sizeof(sp_range); }
int FailTableAlloc(size_t n) { return n == sizeof(UT_hash_table); }
int FailBucketGrowth(size_t n) { return n >= 64 * sizeof(UT_hash_bucket); }
int FailAll(size_t) { return 1; }

TEST_F(RegistryTest, OutOfMemoryForTheRange) {
  sp_mem_set_fail_hook(FailRangeAlloc);
  EXPECT_EQ(sp_reg_insert(kArena, 4096, 0, 0), nullptr);
  EXPECT_EQ(sp_reg_count(), 0u);
  EXPECT_EQ(sp_reg_find_overlap(0, SIZE_MAX), nullptr);
  sp_mem_set_fail_hook(nullptr);
  EXPECT_NE(sp_reg_insert(kArena, 4096, 0, 0), nullptr);
}

TEST_F(RegistryTest, OutOfMemoryForTheHashTable) {
  sp_mem_set_fail_hook(FailTableAlloc);
  EXPECT_EQ(sp_reg_insert(kArena, 4096, 0, 0), nullptr);
  EXPECT_EQ(sp_reg_count(), 0u);
  EXPECT_EQ(sp_reg_find(kArena), nullptr);
  EXPECT_EQ(sp_reg_find_overlap(0, SIZE_MAX), nullptr);
  EXPECT_EQ(sp_reg_maybe(kArena, 4096), 0);
  sp_mem_set_fail_hook(nullptr);
  sp_range* r = sp_reg_insert(kArena, 4096, 0, 0);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(sp_reg_find(kArena), r);
}

TEST_F(RegistryTest, OutOfMemoryWhileTheHashTableGrows) {
  sp_mem_set_fail_hook(FailBucketGrowth);
  std::map<uintptr_t, size_t> model;
  int refused = 0;
  for (int i = 0; i < 3000; i++) {
    uintptr_t b = kArena + i * 0x1000;
    sp_range* r = sp_reg_insert(b, 0x1000, 0, 0);
    if (r) {
      model[b] = 0x1000;
    } else {
      refused++;
      EXPECT_EQ(sp_reg_find(b), nullptr);
      EXPECT_EQ(sp_reg_find_containing(b), nullptr);
    }
  }
  EXPECT_GT(refused, 0);  // growth was attempted, and failed
  ExpectMatchesModel(model);
  ASSERT_GT(model.size(), 100u);
  for (const auto& [b, s] : model) ASSERT_NE(sp_reg_find(b), nullptr);
  sp_mem_set_fail_hook(nullptr);
  for (int i = 3000; i < 6000; i++) {
    uintptr_t b = kArena + i * 0x1000;
    ASSERT_NE(sp_reg_insert(b, 0x1000, 0, 0), nullptr);
    model[b] = 0x1000;
  }
  ExpectMatchesModel(model);
  for (const auto& [b, s] : model) {
    sp_range* r = sp_reg_find(b);
    ASSERT_NE(r, nullptr);
    sp_reg_remove(r);
  }
  EXPECT_EQ(sp_reg_count(), 0u);
}

TEST_F(RegistryTest, OutOfMemoryForAnOp) {
  sp_mem_set_fail_hook(FailAll);
  EXPECT_EQ(sp_reg_op_begin(kArena, 4096), 0u);
  sp_reg_op_end(0);  // harmless
  sp_mem_set_fail_hook(nullptr);
  uint64_t t = sp_reg_op_begin(kArena, 4096);
  EXPECT_GT(t, 0u);
  sp_reg_op_end(t);
}

// --- ops, waits, threads ---------------------------------------------------

TEST_F(RegistryTest, OpTokensAreDistinct) {
  uint64_t a = sp_reg_op_begin(kArena, 0x1000);
  uint64_t b = sp_reg_op_begin(kArena + 0x1000, 0x1000);  // adjacent: no wait
  uint64_t c = sp_reg_op_begin(kArena + 0x800000, 0);
  EXPECT_GT(a, 0u);
  EXPECT_GT(b, a);
  EXPECT_GT(c, b);
  sp_reg_op_end(b);
  sp_reg_op_end(b);          // unknown by now: no-op
  sp_reg_op_end(c + 1000);   // never issued: no-op
  sp_reg_op_end(a);
  sp_reg_op_end(c);
  // All ended: an op over all of them starts at once.
  uint64_t d = sp_reg_op_begin(kArena, 0x1000000);
  EXPECT_GT(d, c);
  sp_reg_op_end(d);
}

TEST_F(RegistryTest, TimedWaitTimesOut) {
  uint64_t t0 = NowNs();
  int rc;
  do {
    rc = sp_lock_timedwait_ns(t0 + 20000000);  // spurious wakeups: loop
  } while (rc == 0);
  EXPECT_EQ(rc, ETIMEDOUT);
  EXPECT_GE(NowNs() - t0, 20000000u);
  EXPECT_EQ(sp_lock_timedwait_ns(t0), ETIMEDOUT);  // already past
  EXPECT_EQ(sp_lock_timedwait_ns(0), ETIMEDOUT);
}

TEST_F(RegistryThreadTest, BroadcastWakesATimedWaiter) {
  std::atomic<bool> waiting{false};
  bool flag = false;  // protected by sp_lock
  int rc = -1;
  uint64_t waited = 0;
  std::thread waiter([&] {
    sp_lock();
    waiting = true;
    uint64_t t0 = NowNs();
    rc = 0;
    while (!flag && rc == 0) rc = sp_lock_timedwait_ns(t0 + 5000000000ULL);
    waited = NowNs() - t0;
    sp_unlock();
  });
  while (!waiting) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  sp_lock();
  flag = true;
  sp_lock_broadcast();
  sp_unlock();
  waiter.join();
  EXPECT_EQ(rc, 0);
  EXPECT_LT(waited, 4000000000ULL);
}

TEST_F(RegistryThreadTest, RemoveWakesAWaiter) {
  sp_lock();
  ASSERT_NE(sp_reg_insert(kArena, 4096, 0, 0), nullptr);
  sp_unlock();
  std::atomic<bool> done{false};
  std::atomic<uint64_t> waited{0};
  std::thread waiter([&] {
    sp_lock();
    uint64_t t0 = NowNs(), deadline = t0 + 5000000000ULL;
    while (sp_reg_find(kArena) != nullptr && NowNs() < deadline)
      sp_lock_timedwait_ns(deadline);
    done = sp_reg_find(kArena) == nullptr;
    waited = NowNs() - t0;
    sp_unlock();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  sp_lock();
  sp_reg_remove(sp_reg_find(kArena));
  sp_unlock();
  waiter.join();
  EXPECT_TRUE(done);
  EXPECT_LT(waited.load(), 4000000000ULL);  // woken, not timed out
}

// Overlapping ops never run concurrently.
TEST_F(RegistryThreadTest, OverlappingOpsAreSerialized) {
  constexpr int kThreads = 8, kIters = 300;
  std::atomic<int> inside{0}, max_inside{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      // Every interval contains the byte kArena + 0x1000, each differently.
      uintptr_t a = kArena + 0x1000 - t * 0x100;
      size_t len = 1 + t * 0x200;
      for (int i = 0; i < kIters; i++) {
        sp_lock();
        uint64_t tok = sp_reg_op_begin(a, len);
        sp_unlock();
        int now = ++inside;
        int seen = max_inside.load();
        while (now > seen && !max_inside.compare_exchange_weak(seen, now)) {
        }
        if (i % 8 == 0) std::this_thread::sleep_for(std::chrono::microseconds(20));
        else sched_yield();
        --inside;
        sp_lock();
        sp_reg_op_end(tok);
        sp_unlock();
        EXPECT_GT(tok, 0u);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(max_inside.load(), 1);
}

// An op over [kArena, +0x1000) blocks an overlapping one until it ends, and
// lets disjoint ones (even on the same page) through meanwhile.
TEST_F(RegistryThreadTest, DisjointOpsRunConcurrently) {
  sp_lock();
  uint64_t held = sp_reg_op_begin(kArena, 0x1000);
  sp_unlock();
  ASSERT_GT(held, 0u);

  std::atomic<bool> blocked_started{false}, blocked_done{false};
  std::thread blocked([&] {
    blocked_started = true;
    sp_lock();
    uint64_t t = sp_reg_op_begin(kArena + 0xfff, 0x10);  // shares one byte
    blocked_done = true;
    sp_reg_op_end(t);
    sp_unlock();
  });
  std::atomic<int> disjoint_done{0};
  std::vector<std::thread> free_threads;
  for (int i = 0; i < 4; i++) {
    free_threads.emplace_back([&, i] {
      sp_lock();
      uint64_t t = i == 0 ? sp_reg_op_begin(kArena + 0x1000, 0x10)  // adjacent
                          : sp_reg_op_begin(kArena - 0x100 * i, 0x100);
      sp_unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      ++disjoint_done;
      sp_lock();
      sp_reg_op_end(t);
      sp_unlock();
    });
  }
  // The disjoint ops finish while `held` is still in flight.
  uint64_t deadline = NowNs() + 3000000000ULL;
  while (disjoint_done < 4 && NowNs() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(disjoint_done.load(), 4);
  while (!blocked_started) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_FALSE(blocked_done.load());

  sp_lock();
  sp_reg_op_end(held);
  sp_unlock();
  blocked.join();
  EXPECT_TRUE(blocked_done.load());
  for (auto& th : free_threads) th.join();
}

// sp_reg_maybe runs without the lock while other threads change the
// registry (TSan checks it is race free); ranges that stay put never get 0.
TEST_F(RegistryThreadTest, MaybeIsSafeWithoutTheLock) {
  sp_lock();
  ASSERT_NE(sp_reg_insert(kArena, 4096, 0, 0), nullptr);
  sp_unlock();
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (int i = 0; i < 2000; i++) {
      sp_lock();
      sp_range* r = sp_reg_insert(kArena + 0x10000000 + i * 0x1000, 64, 0, 0);
      if (r && i % 2) sp_reg_remove(r);
      sp_unlock();
    }
    stop = true;
  });
  int false_zeros = 0;
  while (!stop) false_zeros += sp_reg_maybe(kArena + 100, 8) == 0;
  writer.join();
  EXPECT_EQ(false_zeros, 0);
}

TEST_F(RegistryThreadTest, ForkedChildStartsEmpty) {
  sp_lock();
  ASSERT_NE(sp_reg_insert(kArena, 4096, 0, 0), nullptr);
  sp_unlock();
  pid_t pid = fork();
  if (pid == 0) {
    sp_lock_fork_child(0);
    sp_reg_fork_child(0);
    int bad = 0;
    bad |= sp_reg_inherited(kArena, 4096);  // not read: nothing inherited
    sp_lock();  // must not hang: the child's lock is fresh
    bad |= sp_reg_count() != 0;
    bad |= sp_reg_find(kArena) != nullptr;
    bad |= sp_reg_maybe(kArena, 4096) != 0;
    bad |= sp_reg_insert(kArena, 4096, 0, 0) == nullptr;
    sp_unlock();
    _exit(bad ? 1 : 0);
  }
  ASSERT_GT(pid, 0);
  int status = 0;
  pid_t got = 0;
  uint64_t deadline = NowNs() + 5000000000ULL;
  while ((got = waitpid(pid, &status, WNOHANG)) == 0 && NowNs() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (got == 0) {  // the child hangs (on an inherited lock?)
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    FAIL() << "forked child hung";
  }
  ASSERT_EQ(got, pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  sp_lock();  // the parent's lock was released, its range kept
  EXPECT_EQ(sp_reg_count(), 1u);
  EXPECT_NE(sp_reg_find(kArena), nullptr);
  sp_unlock();
}

// safepin's fork handlers (interpose/init.c): the prepare handler holds the
// lock across the fork, so the child's registry is whole, and its ranges
// become the child's inherited extents: the registry is empty, the extents
// are known (half-open, so a neighbour is not inherited), and the lock is
// the child's.
TEST_F(RegistryThreadTest, ForkedChildKnowsWhatItInherited) {
  sp_init();  // installs the fork handlers
  sp_lock();
  ASSERT_NE(sp_reg_insert(kArena, 4096, 0, 0), nullptr);
  sp_range *pending = sp_reg_insert(kArena + 3 * 4096, 8192, 0, 0);
  ASSERT_NE(pending, nullptr);
  pending->state = SP_RANGE_RELEASING;
  sp_unlock();
  pid_t pid = fork();
  if (pid == 0) {
    int bad = 0;
    bad |= (!sp_reg_inherited(kArena, 1)) << 0;
    bad |= (!sp_reg_inherited(kArena + 4095, 1)) << 1;
    bad |= sp_reg_inherited(kArena + 4096, 4096) << 2;           // the gap
    bad |= (!sp_reg_inherited(kArena + 4096, 3 * 4096)) << 3;    // reaches the pending one
    bad |= (!sp_reg_inherited(kArena + 4 * 4096, 0)) << 4;       // inside the pending one
    bad |= sp_reg_inherited(kArena + 5 * 4096, 4096) << 5;       // just after it
    sp_lock();  // must not hang: the child's lock is its own
    bad |= (sp_reg_count() != 0) << 6;
    bad |= (sp_reg_insert(kArena + 8 * 4096, 4096, 0, 0) == nullptr) << 7;
    sp_unlock();
    _exit(bad);
  }
  ASSERT_GT(pid, 0);
  int status = 0;
  pid_t got = 0;
  uint64_t deadline = NowNs() + 5000000000ULL;
  while ((got = waitpid(pid, &status, WNOHANG)) == 0 && NowNs() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (got == 0) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    FAIL() << "forked child hung";
  }
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "failed checks (bit mask): " << WEXITSTATUS(status);
  EXPECT_EQ(sp_reg_inherited(kArena, 1), 0);  // the parent inherited nothing
}

// A thread cancelled while it waits on the registry's condition variable
// (pthread_cond_wait is a cancellation point) must not end with the lock
// held: every other thread, the exit drain included, would hang. The
// cancellation acts after the thread unlocks. Run in a fresh process (a
// threadsafe death test: threads in a forked child upset TSan), which an
// alarm ends if it hangs.
std::atomic<int> g_cancel_waiting{0}, g_cancel_go{0};

void* CancelledWaiter(void*) {
  sp_lock();
  g_cancel_waiting = 1;
  while (!g_cancel_go) sp_lock_wait();
  sp_unlock();
  pthread_testcancel();  // the cancellation acts here
  return nullptr;
}

void CancelWaiterThenLock() {
  alarm(10);
  pthread_t t;
  if (pthread_create(&t, nullptr, CancelledWaiter, nullptr) != 0) exit(2);
  for (;;) {  // holding the lock while it is set: the waiter waits
    sp_lock();
    bool waiting = g_cancel_waiting;
    if (waiting) break;
    sp_unlock();
    usleep(1000);
  }
  sp_unlock();
  pthread_cancel(t);
  sp_lock();
  g_cancel_go = 1;
  sp_lock_broadcast();
  sp_unlock();
  void* res = nullptr;
  pthread_join(t, &res);
  sp_lock();  // hangs (until the alarm) if the waiter died holding it
  sp_unlock();
  exit(res == PTHREAD_CANCELED ? 0 : 3);
}

TEST(RegistryLockDeathTest, CancelledWaiterLeavesTheLockFree) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(CancelWaiterThenLock(), ::testing::ExitedWithCode(0), "")
      << "killed by the alarm: the process lock was left held; 3: not cancelled";
}

}  // namespace
