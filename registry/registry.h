/*
 * registry.h - the range registry: every host range safepin knows of.
 *
 * A pure data structure and its lock; it knows nothing of HIP. Ranges are
 * kept in a uthash table by base address and in an ordered index (a balanced
 * tree keyed by base) so that overlap queries are O(log n). Ranges in the
 * registry never overlap one another (the hooks guarantee it: an overlapping
 * register waits for, or is refused by, what is there).
 *
 * Locking: the process lock (util/lock.h: sp_lock/sp_unlock) serializes
 * every function below except sp_reg_maybe() and sp_reg_empty(), which take
 * no lock and are what the memory hooks call on every free/munmap.
 * Functions marked "lock held" must be called with the lock held. Memory comes from sp_mem_alloc and
 * sp_mem_free, which bypass the library's own free hook; running out of
 * memory returns NULL/-1, never exits.
 *
 * Dependencies: libc and util/. Callers: diag/, streams/, reaper/,
 * interpose/.
 */
#ifndef SAFEPIN_REGISTRY_H
#define SAFEPIN_REGISTRY_H

#include <stddef.h>
#include <stdint.h>
#include <uthash.h>

#include "lock.h"
#include "util.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sp_range_state {
    SP_RANGE_LIVE = 0,      /* registered, in use by the program */
    SP_RANGE_RELEASING = 1, /* unregistered (or freed) by the program; the
                               real unregister has not completed yet */
} sp_range_state;

/* Node of the ordered index; internal to registry.c. */
typedef struct sp_tree_node {
    struct sp_tree_node *left, *right, *parent;
    int height;
} sp_tree_node;

/* Bytes of room in every range for the layers above (sp_range.part). */
#define SP_REG_PART_ROOM 40

typedef struct sp_range {
    uintptr_t base;          /* key */
    size_t size;
    unsigned flags;          /* hipHostRegister flags */
    int device;              /* device current at registration */
    int rt;                  /* the runtime that registered it (reaper/runtime.h; 0: HIP) */
    void *place;             /* CUDA: the context current at registration */
    int nest;                /* live: how many registrations share it (>= 1) */
    sp_range_state state;
    uint64_t id;             /* unique, increasing */
    /* Set by the hooks/reaper; the registry only stores them. */
    unsigned freed : 1;      /* freed/unmapped/remapped since unregister: no revive */
    unsigned unregistering : 1; /* the real unregister has started */
    unsigned released : 1;      /* the real unregister has completed */
    unsigned leak_reported : 1;
    unsigned stuck : 1;         /* its real unregister failed: kept pinned and alive */
    unsigned registering : 1;   /* the real register is in progress */
    unsigned used : 1;          /* its device address was asked: kernels may use it */
    uint64_t t_unregister_ns;/* when the program unregistered it */
    UT_hash_handle hh;
    sp_tree_node node;
    /* Room for the layers above, zeroed on insert and never read here: each
     * defines its part and where in the room it lies (diag/: the sites,
     * reaper/: the release state). */
    unsigned char part[SP_REG_PART_ROOM] __attribute__((aligned(8)));
} sp_range;

/* A layer's part of r, at offset off of the room. */
static inline void *sp_reg_part(const sp_range *r, size_t off)
{
    return (void *)(r->part + off);
}

/* Number of ranges (live + releasing). Lock held. */
size_t sp_reg_count(void);

/* Lock held. A shadow span (delta 1: add, -1: remove, with the same
 * arguments): memory that is no range any more but that the memory hooks
 * must still look at under the lock (a free or unmap deferred until a
 * release is done, carried out after the range has gone). sp_reg_empty and
 * sp_reg_maybe count it as a range; nothing else sees it. */
void sp_reg_shadow(uintptr_t base, size_t len, int delta);

/* Lock-free: 1 when the registry holds no range and no shadow span at all
 * (a relaxed atomic load, inlined: the memory hooks' single predictable
 * branch). */
extern size_t sp_reg_nranges;
/* Not instrumented: free() may be called while a sanitizer runtime that was
 * preloaded after safepin is still initializing. */
__attribute__((no_sanitize_address)) static inline int sp_reg_empty(void)
{
    return __atomic_load_n(&sp_reg_nranges, __ATOMIC_RELAXED) == 0;
}

/* The lock-free filter's state (registry.c writes it under the lock; only
 * sp_reg_maybe below reads it): counters of 2 MiB regions hashed into
 * 2^16 slots, and the number of "huge" ranges, kept apart from them. */
#define SP_REG_REGION_SHIFT 21
#define SP_REG_SLOT_BITS 16
extern unsigned sp_reg_slots[1u << SP_REG_SLOT_BITS];
extern size_t sp_reg_huge_n;

static inline unsigned sp_reg_region_slot(uintptr_t region)
{
    /* Consecutive regions take consecutive slots: two regions share one
     * only 2^16 regions (128 GiB) apart. */
    return (unsigned)(region & ((1u << SP_REG_SLOT_BITS) - 1));
}

/* The general case of sp_reg_maybe (wide or odd queries, huge ranges). */
int sp_reg_maybe_slow(uintptr_t addr, size_t len);

/* Lock-free filter for the memory hooks: 0 means no range can overlap
 * [addr, addr+len) (one predictable branch when the registry is empty);
 * 1 means "maybe": take the lock and look. Never a false 0. Inline, because
 * every free() with ranges registered asks it: a block within two adjacent
 * regions, with no huge range anywhere, costs two loads of the counters. */
__attribute__((no_sanitize_address)) static inline int sp_reg_maybe(uintptr_t addr, size_t len)
{
    if (__atomic_load_n(&sp_reg_nranges, __ATOMIC_RELAXED) == 0)
        return 0;
    uintptr_t last = addr + len - 1;
    if (len == 0 || len > ((size_t)1 << SP_REG_REGION_SHIFT) || last < addr ||
        __atomic_load_n(&sp_reg_huge_n, __ATOMIC_RELAXED) != 0)
        return sp_reg_maybe_slow(addr, len);
    uintptr_t r0 = addr >> SP_REG_REGION_SHIFT, r1 = last >> SP_REG_REGION_SHIFT;
    unsigned v = __atomic_load_n(&sp_reg_slots[sp_reg_region_slot(r0)], __ATOMIC_RELAXED);
    if (r1 != r0) /* most blocks lie within one region: one load */
        v |= __atomic_load_n(&sp_reg_slots[sp_reg_region_slot(r1)], __ATOMIC_RELAXED);
    return v != 0;
}

/* Insert a new LIVE range with nest = 1 and a fresh id. Lock held. Returns
 * NULL if out of memory or if it would overlap an existing range. */
sp_range *sp_reg_insert(uintptr_t base, size_t size, unsigned flags, int device);

/* Remove and free a range. Lock held. */
void sp_reg_remove(sp_range *r);

/* Exact lookup by base. Lock held. */
sp_range *sp_reg_find(uintptr_t base);

/* The range with the lowest base that overlaps [addr, addr+len), or NULL.
 * len 0 is treated as 1. Lock held. O(log n). */
sp_range *sp_reg_find_overlap(uintptr_t addr, size_t len);

/* The range containing addr (base <= addr < base+size), or NULL. Lock held. */
sp_range *sp_reg_find_containing(uintptr_t addr);

/* The next range in address order after r, or NULL. Lock held. */
sp_range *sp_reg_next(sp_range *r);

/* Call fn(r, arg) for every range overlapping [addr, addr+len), in address
 * order; stops early if fn returns nonzero (and returns that value). fn must
 * not insert or remove ranges. Lock held. */
int sp_reg_for_overlaps(uintptr_t addr, size_t len,
                        int (*fn)(sp_range *r, void *arg), void *arg);

/* Call fn for every range (any order); same rules. Lock held. */
int sp_reg_for_each(int (*fn)(sp_range *r, void *arg), void *arg);

/* Lock held. Checks every internal invariant (tree order, balance, heights
 * and parent links; no two ranges overlap; the hash table, the tree and the
 * count agree; the lock-free filter covers every range). 0 if all hold, else
 * a nonzero code naming the first broken one. O(n); for tests and debugging
 * (an addition to the original contract). */
int sp_reg_check(void);

/* G5 serialization of real runtime calls on overlapping byte ranges.
 * sp_reg_op_begin waits (on the condvar) until no op in flight overlaps
 * [addr, addr+len), then records this one and returns a token (> 0), or 0 if
 * out of memory (the caller then proceeds unserialized, never fails). Lock
 * held on entry and exit; released while waiting. sp_reg_op_end removes the
 * op and broadcasts. Lock held. */
uint64_t sp_reg_op_begin(uintptr_t addr, size_t len);
void sp_reg_op_end(uint64_t token);
/* The same for a caller that does not hold the lock (takes it). */
uint64_t sp_reg_op_enter(uintptr_t addr, size_t len);
void sp_reg_op_leave(uint64_t token);

/* Forget every range and op (tests). The lock and condvar stay as they
 * are, so threads waiting on them are not disturbed. */
void sp_reg_reset(void);

/* fork, in the child (pthread_atfork, after sp_lock_fork_child): an empty
 * registry. When consistent (the parent's fork handler held the lock across
 * the fork), the extents of every range the parent had, live or pending,
 * are kept as inherited (below); otherwise none are. */
void sp_reg_fork_child(int consistent);

/* Inherited ranges (G9): in a forked child, the extents of the ranges its
 * parent had live or pending at the fork. The runtime's state there is a
 * copy safepin cannot know, so the hooks pass the child's own calls on
 * them to the runtime as they are and make no call of their own there.
 * Written once, in the child's fork handler, before any other code runs in
 * it, and never changed after: read without the lock. 1 if [addr, addr+len)
 * (len 0 as 1) overlaps an inherited extent. */
int sp_reg_inherited(uintptr_t addr, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* SAFEPIN_REGISTRY_H */
