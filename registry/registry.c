/*
 * registry.c - the range registry (see registry.h for the contract).
 *
 * Three structures describe the same set of ranges, all changed under the
 * one mutex:
 *   - a uthash table keyed by base, for exact lookups (sp_reg_find);
 *   - an intrusive AVL tree on sp_range.node (tree.c), keyed by base, for ordered and
 *     overlap queries (ranges never overlap, so the lowest range overlapping
 *     [a, a+len) is the greatest base <= a, if it reaches a, else the next);
 *   - a lock-free summary for sp_reg_maybe(): a count of ranges, counters of
 *     2 MiB regions hashed into a fixed array, and the bounds of "huge"
 *     ranges (those spanning too many regions to count one by one).
 * The op list (G5 serialization) is a short singly linked list, also under
 * the mutex.
 *
 * Memory comes from sp_mem_alloc (util/), so the library's own free hook
 * never sees it; allocation failure is reported, never fatal.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

/* uthash must be configured before registry.h includes it. */
#define HASH_NONFATAL_OOM 1
#define uthash_malloc(sz) sp_mem_alloc(sz)
#define uthash_free(ptr, sz) sp_mem_free(ptr)
#define uthash_nonfatal_oom(obj) (g_hash_oom = true)
#define HASH_FUNCTION(keyptr, keylen, hashv) ((hashv) = reg_hash_key(keyptr))

static bool g_hash_oom; /* set by uthash when an insert failed; lock held */
static unsigned reg_hash_key(const void *keyptr);

#include "registry.h"
#include "lock.h"
#include "tree.h"
#include "util.h"

/* ------------------------------------------------------------------------ */
/* State                                                                    */

#define REGION_SHIFT SP_REG_REGION_SHIFT /* 2 MiB regions for sp_reg_maybe */
#define SLOT_BITS SP_REG_SLOT_BITS
#define SLOT_COUNT (1u << SLOT_BITS)
#define SPAN_MAX_REGIONS 64           /* wider ranges count as "huge" */
#define QUERY_MAX_REGIONS 4           /* wider queries just answer "maybe" */

static sp_range *g_table;             /* uthash head */
static uint64_t g_next_id;            /* never reset: ids stay increasing */

/* Lock-free summary: written under the lock, read by sp_reg_maybe. The
 * number of ranges and shadow spans is read by every free() (sp_reg_empty,
 * inline): a cache line of its own, never shared with data written on each
 * op. g_nreal counts the ranges alone. */
__attribute__((aligned(64))) size_t sp_reg_nranges;
static size_t g_nreal;
/* The filter (registry.h: sp_reg_maybe reads it inline). Plain integers
 * accessed only through __atomic builtins, so that the header serves C and
 * C++ alike. */
__attribute__((aligned(64))) size_t sp_reg_huge_n;
static uintptr_t g_huge_lo = UINTPTR_MAX;
static uintptr_t g_huge_hi;
unsigned sp_reg_slots[SLOT_COUNT];
#define g_slots sp_reg_slots
#define g_huge_n sp_reg_huge_n

typedef struct sp_op {
    uintptr_t first, last;            /* inclusive */
    uint64_t token;
    struct sp_op *next;
} sp_op;

/* The op list, written under the lock on every op: a cache line of its own,
 * away from what free() reads. next_token is never reset. */
static struct {
    sp_op *ops;
    uint64_t next_token;
} __attribute__((aligned(64))) g_op;

static unsigned reg_hash_key(const void *keyptr)
{
    uint64_t k;

    memcpy(&k, keyptr, sizeof k);
    k ^= k >> 33;                     /* murmur3 finalizer */
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return (unsigned)k;
}

/* Inclusive last byte of [addr, addr+len), len 0 counted as 1, saturated. */
static uintptr_t last_byte(uintptr_t addr, size_t len)
{
    if (len == 0)
        len = 1;
    if (len - 1 > UINTPTR_MAX - addr)
        return UINTPTR_MAX;
    return addr + (len - 1);
}

static uintptr_t range_last(const sp_range *r)
{
    return r->base + (r->size - 1);
}

/* ------------------------------------------------------------------------ */
/* Lock-free filter                                                         */

static unsigned region_slot(uintptr_t region)
{
    return sp_reg_region_slot(region);
}

/* Lock held. Adds (delta 1) or removes (delta -1) a range from the summary.
 * The huge/small decision depends only on the range, so it is symmetric. */
static void summary_update(uintptr_t base, uintptr_t last, int delta)
{
    uintptr_t r0 = base >> REGION_SHIFT, r1 = last >> REGION_SHIFT;

    if (r1 - r0 >= SPAN_MAX_REGIONS) {
        if (delta > 0) {
            if (base < __atomic_load_n(&g_huge_lo, __ATOMIC_RELAXED))
                __atomic_store_n(&g_huge_lo, base, __ATOMIC_RELAXED);
            if (last > __atomic_load_n(&g_huge_hi, __ATOMIC_RELAXED))
                __atomic_store_n(&g_huge_hi, last, __ATOMIC_RELAXED);
            __atomic_fetch_add(&g_huge_n, 1, __ATOMIC_RELAXED);
        } else if (__atomic_fetch_sub(&g_huge_n, 1, __ATOMIC_RELAXED) == 1) {
            /* The bounds only widen while huge ranges live; shrink them back
             * once none is left. */
            __atomic_store_n(&g_huge_lo, UINTPTR_MAX, __ATOMIC_RELAXED);
            __atomic_store_n(&g_huge_hi, 0, __ATOMIC_RELAXED);
        }
        return;
    }
    for (uintptr_t r = r0;; r++) {
        if (delta > 0)
            __atomic_fetch_add(&g_slots[region_slot(r)], 1, __ATOMIC_RELAXED);
        else
            __atomic_fetch_sub(&g_slots[region_slot(r)], 1, __ATOMIC_RELAXED);
        if (r == r1)
            break;
    }
}

static int maybe_slow(uintptr_t addr, size_t len)
{
    uintptr_t last = last_byte(addr, len);
    uintptr_t r0 = addr >> REGION_SHIFT, r1 = last >> REGION_SHIFT;

    if (__atomic_load_n(&g_huge_n, __ATOMIC_RELAXED) != 0 &&
        addr <= __atomic_load_n(&g_huge_hi, __ATOMIC_RELAXED) &&
        last >= __atomic_load_n(&g_huge_lo, __ATOMIC_RELAXED))
        return 1;
    if (r1 - r0 >= QUERY_MAX_REGIONS)
        return 1;
    for (uintptr_t r = r0;; r++) {
        if (__atomic_load_n(&g_slots[region_slot(r)], __ATOMIC_RELAXED) != 0)
            return 1;
        if (r == r1)
            return 0;
    }
}

/* No lock. 0: no range in the registry overlaps [addr, addr+len) (for every
 * change to the registry that happened before this call); 1: maybe. The
 * common cases are answered inline by sp_reg_maybe (registry.h). */
int sp_reg_maybe_slow(uintptr_t addr, size_t len)
{
    if (__atomic_load_n(&sp_reg_nranges, __ATOMIC_RELAXED) == 0)
        return 0;
    return maybe_slow(addr, len);
}

/* Lock held, or a racy (but data-race-free) read. */
size_t sp_reg_count(void)
{
    return __atomic_load_n(&g_nreal, __ATOMIC_RELAXED);
}

void sp_reg_shadow(uintptr_t base, size_t len, int delta)
{
    if (len == 0)
        return;
    summary_update(base, last_byte(base, len), delta);
    if (delta > 0)
        __atomic_fetch_add(&sp_reg_nranges, 1, __ATOMIC_RELAXED);
    else
        __atomic_fetch_sub(&sp_reg_nranges, 1, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------------ */
/* Ranges                                                                   */

/* Lock held. Inserts a LIVE range (nest 1, a fresh id, every other field
 * zero) into the table, the tree and the lock-free summary. Returns NULL,
 * changing nothing, if size is 0, the range wraps the address space, it
 * overlaps a range already there, or memory runs out. */
sp_range *sp_reg_insert(uintptr_t base, size_t size, unsigned flags, int device)
{
    sp_range *r;

    if (size == 0 || size - 1 > UINTPTR_MAX - base)
        return NULL;
    if (sp_reg_find_overlap(base, size) != NULL)
        return NULL;
    r = sp_mem_calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    r->base = base;
    r->size = size;
    r->flags = flags;
    r->device = device;
    r->nest = 1;
    r->state = SP_RANGE_LIVE;

    g_hash_oom = false;
    HASH_ADD(hh, g_table, base, sizeof r->base, r);
    if (g_hash_oom) {
        g_hash_oom = false;
        sp_mem_free(r);
        return NULL;
    }
    r->id = ++g_next_id;
    sp_tree_insert(r);
    summary_update(base, range_last(r), 1);
    __atomic_fetch_add(&sp_reg_nranges, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&g_nreal, 1, __ATOMIC_RELAXED);
    return r;
}

/* Lock held. Removes r (which must be in the registry) from every structure,
 * frees it and broadcasts. */
void sp_reg_remove(sp_range *r)
{
    HASH_DELETE(hh, g_table, r);
    sp_tree_remove(&r->node);
    summary_update(r->base, range_last(r), -1);
    __atomic_fetch_sub(&sp_reg_nranges, 1, __ATOMIC_RELAXED);
    __atomic_fetch_sub(&g_nreal, 1, __ATOMIC_RELAXED);
    sp_mem_free(r);
    sp_lock_broadcast();
}

/* Lock held. The range whose base is exactly `base`, or NULL. O(1). */
sp_range *sp_reg_find(uintptr_t base)
{
    sp_range *r;

    HASH_FIND(hh, g_table, &base, sizeof base, r);
    return r;
}

/* Lock held. The lowest range sharing a byte with [addr, addr+len) (len 0
 * counts as 1; the interval is clipped at the top of the address space), or
 * NULL. O(log n). */
sp_range *sp_reg_find_overlap(uintptr_t addr, size_t len)
{
    uintptr_t last = last_byte(addr, len);
    sp_range *r = sp_tree_floor(addr);

    if (r && range_last(r) >= addr)
        return r;
    r = sp_tree_above(addr);
    if (r && r->base <= last)
        return r;
    return NULL;
}

/* Lock held. The range with base <= addr < base+size, or NULL. O(log n). */
sp_range *sp_reg_find_containing(uintptr_t addr)
{
    sp_range *r = sp_tree_floor(addr);

    return r && range_last(r) >= addr ? r : NULL;
}

/* Lock held. The range after r in address order, or NULL. */
sp_range *sp_reg_next(sp_range *r)
{
    return sp_tree_range(sp_tree_next(&r->node));
}

/* Lock held. Calls fn for each range overlapping [addr, addr+len), lowest
 * base first; stops at, and returns, the first nonzero result; 0 otherwise. */
int sp_reg_for_overlaps(uintptr_t addr, size_t len,
                        int (*fn)(sp_range *r, void *arg), void *arg)
{
    uintptr_t last = last_byte(addr, len);
    sp_range *r = sp_reg_find_overlap(addr, len);

    while (r && r->base <= last) {
        sp_range *next = sp_reg_next(r);
        int rc = fn(r, arg);

        if (rc)
            return rc;
        r = next;
    }
    return 0;
}

/* Lock held. Calls fn for every range (in address order, though callers must
 * not rely on it); stops at, and returns, the first nonzero result. */
int sp_reg_for_each(int (*fn)(sp_range *r, void *arg), void *arg)
{
    sp_tree_node *n = sp_tree_first();

    while (n) {
        sp_tree_node *next = sp_tree_next(n);
        int rc = fn(sp_tree_range(n), arg);

        if (rc)
            return rc;
        n = next;
    }
    return 0;
}

/* Lock held. See registry.h: 0 if every internal invariant holds. */
int sp_reg_check(void)
{
    size_t count = 0;
    int h = sp_tree_check(&count);
    sp_range *prev = NULL;

    if (h < 0)
        return -h;                    /* 1..4: shape of the tree */
    if (count != HASH_COUNT(g_table) ||
        count != __atomic_load_n(&g_nreal, __ATOMIC_RELAXED))
        return 5;
    for (sp_tree_node *n = sp_tree_first(); n; n = sp_tree_next(n)) {
        sp_range *r = sp_tree_range(n);

        if (prev && range_last(prev) >= r->base)
            return 6;                 /* out of order or overlapping */
        if (sp_reg_find(r->base) != r)
            return 7;
        if (r->size == 0 || r->size - 1 > UINTPTR_MAX - r->base)
            return 8;
        if (maybe_slow(r->base, 1) != 1 || maybe_slow(range_last(r), 1) != 1)
            return 9;
        prev = r;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Op serialization (G5)                                                    */

/* Lock held on entry and exit (released while waiting). Waits until no op
 * in flight overlaps [addr, addr+len), then records this one. Returns its
 * token (> 0), or 0 if out of memory (the caller goes on unserialized). */
uint64_t sp_reg_op_begin(uintptr_t addr, size_t len)
{
    uintptr_t last = last_byte(addr, len);
    sp_op *op = sp_mem_alloc(sizeof *op);

    if (op == NULL)
        return 0;
    for (;;) {
        sp_op *o = g_op.ops;

        while (o && (o->last < addr || o->first > last))
            o = o->next;
        if (o == NULL)
            break;
        sp_lock_wait();
    }
    op->first = addr;
    op->last = last;
    op->token = ++g_op.next_token;
    op->next = g_op.ops;
    g_op.ops = op;
    return op->token;
}

/* Lock held. Ends the op with this token (0 or an unknown token: no-op) and
 * broadcasts. */
void sp_reg_op_end(uint64_t token)
{
    sp_op **link = &g_op.ops;

    if (token == 0)
        return;
    while (*link && (*link)->token != token)
        link = &(*link)->next;
    if (*link) {
        sp_op *op = *link;

        *link = op->next;
        sp_mem_free(op);
    }
    sp_lock_broadcast();
}

uint64_t sp_reg_op_enter(uintptr_t addr, size_t len)
{
    sp_lock();
    uint64_t t = sp_reg_op_begin(addr, len);
    sp_unlock();
    return t;
}

void sp_reg_op_leave(uint64_t token)
{
    if (token == 0)
        return;
    sp_lock();
    sp_reg_op_end(token);
    sp_unlock();
}

/* ------------------------------------------------------------------------ */
/* Reset and fork                                                           */

/* Without the lock (no other thread may use the registry meanwhile): frees
 * every range and op, clears the summary and re-initializes the mutex and
 * the condvar. Ids and tokens keep increasing. Makes no runtime call. */
/* The lock-free filter says "no range" everywhere. */
static void filter_clear(void)
{
    for (unsigned i = 0; i < SLOT_COUNT; i++)
        __atomic_store_n(&g_slots[i], 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g_huge_n, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g_huge_lo, UINTPTR_MAX, __ATOMIC_RELAXED);
    __atomic_store_n(&g_huge_hi, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&sp_reg_nranges, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g_nreal, 0, __ATOMIC_RELAXED);
}

void sp_reg_reset(void)
{
    sp_range *head = g_table, *r, *next;
    sp_op *op = g_op.ops;

    HASH_CLEAR(hh, g_table);          /* frees the buckets, not the items */
    for (r = head; r != NULL; r = next) {
        next = r->hh.next;
        sp_mem_free(r);
    }
    sp_tree_reset();
    while (op) {
        sp_op *o = op->next;

        sp_mem_free(op);
        op = o;
    }
    g_op.ops = NULL;
    g_hash_oom = false;
    filter_clear();
}

/* Inherited extents, sorted by base, not overlapping (registry ranges never
 * overlap). Set in the child's fork handler, read-only afterwards. */
static struct {
    size_t n;
    struct {
        uintptr_t lo, hi;
    } *e;
} g_inh;

int sp_reg_inherited(uintptr_t addr, size_t len)
{
    size_t n = __atomic_load_n(&g_inh.n, __ATOMIC_ACQUIRE);
    if (n == 0)
        return 0;
    uintptr_t a = addr, b = addr + (len ? len : 1);
    if (b < a)
        b = UINTPTR_MAX;
    size_t lo = 0, hi = n; /* the first extent ending after a */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (g_inh.e[mid].hi <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && g_inh.e[lo].lo < b;
}

/* The child's copy of the parent's ranges, in address order (the tree).
 * Memory for it may be missing: then nothing is inherited, as before. */
static void inherit_extents(void)
{
    size_t n = HASH_COUNT(g_table), k = 0;
    g_inh.n = 0;
    g_inh.e = NULL;
    if (n == 0)
        return;
    void *e = sp_mem_calloc(n, sizeof(*g_inh.e));
    if (!e)
        return;
    g_inh.e = e;
    for (sp_range *r = sp_reg_find_overlap(0, UINTPTR_MAX); r && k < n; r = sp_reg_next(r)) {
        g_inh.e[k].lo = r->base;
        g_inh.e[k].hi = r->base + r->size;
        k++;
    }
    __atomic_store_n(&g_inh.n, k, __ATOMIC_RELEASE);
}

/* pthread_atfork child. consistent: the parent's prepare handler held the
 * lock across the fork, so the table and the tree are whole, and the ranges
 * they hold become the child's inherited extents. Otherwise (a fork from a
 * signal handler that interrupted safepin's own code) the child forgets them
 * without reading them. Either way the child starts with an empty registry
 * (G9; sp_lock_fork_child gives it a fresh lock). The parent's nodes are
 * abandoned, not freed: their memory is the parent's copy, harmless here. */
void sp_reg_fork_child(int consistent)
{
    if (consistent)
        inherit_extents();
    else
        g_inh.n = 0;
    g_table = NULL;
    sp_tree_reset();
    g_op.ops = NULL;
    g_hash_oom = false;
    filter_clear();
}
