/*
 * model_cuda.c - seeded random workloads on the CUDA driver face, checked
 * against a reference model of DESIGN section 2 (model.c is the HIP face's).
 *
 *   model_cuda [--seed N] [--ops N] [--threads N]
 *              [--mode ordered|async|sync|bare]
 *
 * Run on simcuda (LD_LIBRARY_PATH=build/simcuda) under safepin, with
 * SAFEPIN_OPTIONS=unregister=<mode>, or with --mode bare and no LD_PRELOAD
 * (tests/model/run.sh does both). Each thread owns slots of malloc'd
 * memory (4 KiB to 1 MiB: neighbouring blocks share pages; threads 0, 3,
 * ... one slot, a loop over buffers; threads 1, 4, ... three; the others
 * six) and one stream of its own, and shares the legacy stream, the
 * per-thread stream and two created streams (blocking, non-blocking) with
 * the others. A slot is registered with cuMemHostRegister(_v2)
 * (DEVICEMAP), filled by cuMemsetD8Async through the pointer
 * cuMemHostGetDevicePointer_v2 gives, synchronized and checked,
 * unregistered, freed or reallocated (registered or not, with the memset
 * in flight or not; the slot's next buffer often allocated, registered and
 * filled at once, beside the one whose release runs), registered again
 * identically (nested) or overlapping. Every slot has a reference model:
 * its state (empty, allocated, registered with a nesting count), the exact
 * bytes it must hold (`shadow`, updated when a host write is made or a
 * device write is enqueued) and the one stream whose device writes to it
 * may still be outstanding (`dirty`). Every driver call is checked against
 * the return code the model predicts, and every host read of a slot (made
 * only where the model says no device write can still be outstanding)
 * against its shadow.
 *
 * What the model predicts:
 *  - cuStreamSynchronize(s) / cuCtxSynchronize: writes on s / all done;
 *  - an unregister (the last of a nesting or not): in unregister=ordered
 *    and sync, and on the bare driver (its unregister waits for the whole
 *    device), every earlier write is done (G3); unregister=async: nothing;
 *  - an identical register of a live range nests under safepin (G5) and is
 *    712 on the bare driver; any other overlap is 712; an interior
 *    unregister is 1 (the range keeps working); an unregister of memory not
 *    registered (or whose release is pending) is 713; the device pointer of
 *    memory not registered is 1 (G4);
 *  - a live registration's pages stay pinned whatever its neighbours do
 *    (a release of one sharing its first or last page included): the
 *    device's writes are in the process's bytes after a synchronize;
 *  - a free or realloc of registered memory (under safepin) releases the
 *    registration and keeps the memory alive until the device is done with
 *    it (G2, G7): late device writes never land in what the program
 *    allocates next (checked through the shadows of later allocations).
 * The bare run leaves out what the bare driver gets wrong (a free or
 * realloc of registered memory leaks the registration): it checks the
 * model and simcuda themselves.
 *
 * The operation count per thread is a prefix property: rerunning a seed
 * with fewer --ops runs the same program, cut short (run.sh shrinks with
 * it). Output: "model: seed=S ops=N ..." and "OK", or the first mismatches
 * and exit 1.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_min.h"
#include "owed.h"

#define NSLOTS 6
#define MAXTHREADS 8
#define MIN_SIZE (4u * 1024)
#define MAX_SIZE (1024u * 1024)
/* Stream table per thread: 0 NULL (legacy), 1 CU_STREAM_LEGACY, 2 per-thread,
 * 3 shared blocking, 4 shared non-blocking, 5 the thread's own (may be
 * destroyed and recreated, blocking or not). */
#define NSTREAMS 6
#define SHARED_NB 4
#define OWN 5
#define CLEAN -1
#define DIRTY_ANY -2 /* outstanding on a destroyed stream: cuCtxSynchronize */

enum mode { M_ORDERED, M_ASYNC, M_SYNC, M_BARE };
enum state { S_EMPTY, S_ALLOC, S_REG };

static const char *const mode_names[] = { "ordered", "async", "sync", "bare" };
static enum mode g_mode = M_ORDERED;
static unsigned long g_seed = 1;
static long g_ops = 250;
static int g_threads = 3;
static CUcontext g_ctx;
static CUstream g_shared[2];
static atomic_int g_failures;
static atomic_long g_done_ops;

struct slot {
    int state, count;
    unsigned flags;   /* of the live registration */
    unsigned char *p;
    size_t size;
    unsigned char *shadow;
    int dirty;        /* CLEAN, DIRTY_ANY or a stream index */
};

struct thr {
    int id;
    uint64_t rng;
    long op;
    CUstream st[NSTREAMS];
    int own_live;
    int nslots;       /* the slots it uses: 1 (a loop over buffers, each
                       * freed or reallocated registered half the time) to
                       * NSLOTS */
    int last;         /* the slot of the last step */
    struct slot s[NSLOTS];
    char trace[8][112]; /* the last operations, for a failure report */
    unsigned ntrace;
};

/* ---- helpers --------------------------------------------------------- */
static uint64_t rnd(struct thr *t)
{
    /* splitmix64, as model.c */
    uint64_t z = (t->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static unsigned rn(struct thr *t, unsigned n) { return (unsigned)(rnd(t) % n); }

static const char *ename(CUresult e)
{
    const char *s = NULL;
    cuGetErrorName(e, &s);
    return s ? s : "?";
}

static void note(struct thr *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct thr *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->trace[t->ntrace++ % 8], sizeof t->trace[0], fmt, ap);
    va_end(ap);
}

static void fail(struct thr *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct thr *t, const char *fmt, ...)
{
    char msg[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    flockfile(stderr);
    fprintf(stderr, "model: FAIL seed=%lu thread=%d op=%ld: %s\n", g_seed, t->id, t->op, msg);
    for (unsigned i = t->ntrace > 8 ? t->ntrace - 8 : 0; i < t->ntrace; i++)
        fprintf(stderr, "model:   thread %d trace: %s\n", t->id, t->trace[i % 8]);
    funlockfile(stderr);
    atomic_fetch_add(&g_failures, 1);
}

#define EXPECT(t, call, want)                                                        \
    do {                                                                             \
        CUresult e_ = (call), w_ = (want);                                           \
        if (e_ != w_)                                                                \
            fail(t, "%s returned %s (%d), model says %s (%d)", #call, ename(e_),     \
                 (int)e_, ename(w_), (int)w_);                                       \
    } while (0)

/* ---- the model's operations ------------------------------------------ */
static void check_bytes(struct thr *t, struct slot *sl, int i)
{
    if (memcmp(sl->p, sl->shadow, sl->size) == 0)
        return;
    size_t first = SIZE_MAX, last = 0, bad = 0;
    for (size_t k = 0; k < sl->size; k++)
        if (sl->p[k] != sl->shadow[k]) {
            if (first == SIZE_MAX)
                first = k;
            last = k;
            bad++;
        }
    fail(t, "slot %d (%p, %zu bytes): byte %zu is 0x%02x, model says 0x%02x (%zu bytes differ, "
            "in [%zu, %zu])",
         i, (void *)sl->p, sl->size, first, sl->p[first], sl->shadow[first], bad, first, last);
}

static void all_clean(struct thr *t)
{
    for (int k = 0; k < NSLOTS; k++)
        t->s[k].dirty = CLEAN;
}

/* Make a slot's outstanding writes complete (model: clean). */
static void settle(struct thr *t, struct slot *sl)
{
    if (sl->dirty == CLEAN)
        return;
    if (sl->dirty == DIRTY_ANY) {
        EXPECT(t, cuCtxSynchronize(), CUDA_SUCCESS);
        all_clean(t);
        return;
    }
    int d = sl->dirty;
    EXPECT(t, cuStreamSynchronize(t->st[d]), CUDA_SUCCESS);
    for (int k = 0; k < NSLOTS; k++)
        if (t->s[k].dirty == d)
            t->s[k].dirty = CLEAN;
}

/* The host writes the whole slot: a pattern, or (plain) one byte value,
 * as fast as a program's memset, so that what follows comes as soon. */
static void host_fill(struct thr *t, struct slot *sl, int plain)
{
    uint64_t v = rnd(t);
    if (plain) {
        memset(sl->shadow, (int)(v & 0xff), sl->size);
        memset(sl->p, (int)(v & 0xff), sl->size);
        return;
    }
    size_t nw = sl->size / 8;
    uint64_t w;
    for (size_t k = 0; k < nw; k++) {
        w = v ^ (k * 0x9e3779b97f4a7c15ull);
        memcpy(sl->shadow + 8 * k, &w, 8);
    }
    for (size_t k = 8 * nw; k < sl->size; k++)
        sl->shadow[k] = (unsigned char)(v >> (k % 8));
    memcpy(sl->p, sl->shadow, sl->size);
}

static size_t pick_size(struct thr *t)
{
    if (rn(t, 4) == 0) /* whole pages and a few bytes */
        return 4096 * (1 + rn(t, 16)) + rn(t, 64);
    return MIN_SIZE + rn(t, MAX_SIZE - MIN_SIZE + 1);
}

/* Mostly a non-blocking stream, sometimes the legacy stream. */
static int pick_stream(struct thr *t)
{
    unsigned r = rn(t, 100);
    int d = r < 45 ? OWN : r < 70 ? SHARED_NB : r < 78 ? 0 : r < 84 ? 1 : r < 92 ? 2 : 3;
    if (d == OWN && !t->own_live)
        d = SHARED_NB;
    return d;
}

static void op_alloc(struct thr *t, int i, int plain)
{
    struct slot *sl = &t->s[i];
    sl->size = pick_size(t);
    sl->p = malloc(sl->size);
    if (!sl->p) {
        fail(t, "malloc(%zu) failed", sl->size);
        return;
    }
    sl->shadow = realloc(sl->shadow, sl->size);
    host_fill(t, sl, plain);
    sl->state = S_ALLOC;
    sl->count = 0;
    sl->dirty = CLEAN;
    note(t, "alloc slot %d %p %zu", i, (void *)sl->p, sl->size);
}


static void op_register(struct thr *t, int i)
{
    struct slot *sl = &t->s[i];
    unsigned fl = CU_MEMHOSTREGISTER_DEVICEMAP | (rn(t, 4) == 0 ? CU_MEMHOSTREGISTER_PORTABLE : 0);
    int v1 = rn(t, 4) == 0;
    note(t, "register%s slot %d %p %zu flags %u", v1 ? "" : "_v2", i, (void *)sl->p, sl->size, fl);
    EXPECT(t,
           v1 ? cuMemHostRegister(sl->p, sl->size, fl) : cuMemHostRegister_v2(sl->p, sl->size, fl),
           CUDA_SUCCESS);
    owed_set(sl->p, 0);
    sl->state = S_REG;
    sl->count = 1;
    sl->flags = fl;
}

/* cuMemsetD8Async of a part of the slot (or all of it) through its device
 * pointer. A slot's writes stay on one stream (per-slot order). */
static int op_memset(struct thr *t, int i, int whole)
{
    struct slot *sl = &t->s[i];
    int d = pick_stream(t);
    if (sl->dirty == DIRTY_ANY)
        settle(t, sl);
    if (sl->dirty != CLEAN)
        d = sl->dirty;
    size_t off = 0, n = sl->size;
    if (!whole && rn(t, 2)) {
        off = rn(t, (unsigned)sl->size);
        n = 1 + rn(t, (unsigned)(sl->size - off));
    }
    unsigned char v = (unsigned char)(1 + rn(t, 255));
    CUdeviceptr dp = 0;
    EXPECT(t, cuMemHostGetDevicePointer_v2(&dp, sl->p, 0), CUDA_SUCCESS);
    if (!dp) {
        fail(t, "no device pointer for registered slot %d %p", i, (void *)sl->p);
        return d;
    }
    memset(sl->shadow + off, v, n);
    note(t, "memset slot %d [%zu,+%zu) = 0x%02x stream %d", i, off, n, v, d);
    EXPECT(t, cuMemsetD8Async(dp + off, v, n, t->st[d]), CUDA_SUCCESS);
    sl->dirty = d;
    return d;
}

static void op_unregister(struct thr *t, int i)
{
    struct slot *sl = &t->s[i];
    note(t, "unregister slot %d %p count %d dirty %d", i, (void *)sl->p, sl->count, sl->dirty);
    EXPECT(t, cuMemHostUnregister(sl->p), CUDA_SUCCESS);
    if (--sl->count == 0)
        sl->state = S_ALLOC;
    if (g_mode != M_ASYNC) /* G3, and the bare driver's device-wide wait */
        all_clean(t);
}

static void op_free(struct thr *t, int i)
{
    struct slot *sl = &t->s[i];
    note(t, "free slot %d %p (state %d count %d dirty %d)", i, (void *)sl->p, sl->state,
         sl->count, sl->dirty);
    if (sl->state == S_REG && g_mode != M_BARE)
        owed_set(sl->p, 1);
    free(sl->p); /* registered: freed-while-registered, kept alive (G2, G7) */
    sl->state = S_EMPTY;
    sl->p = NULL;
}

/* realloc keeps the bytes as they are at the call: settle first. */
static void op_realloc(struct thr *t, int i)
{
    struct slot *sl = &t->s[i];
    settle(t, sl);
    size_t nsz = pick_size(t);
    note(t, "realloc slot %d %p state %d count %d -> %zu", i, (void *)sl->p, sl->state, sl->count,
         nsz);
    if (sl->state == S_REG && g_mode != M_BARE)
        owed_set(sl->p, 1);
    unsigned char *q = realloc(sl->p, nsz);
    if (!q) {
        fail(t, "realloc to %zu failed", nsz);
        return;
    }
    sl->p = q;
    sl->shadow = realloc(sl->shadow, nsz);
    size_t old = sl->size;
    sl->size = nsz;
    for (size_t k = old; k < nsz; k++) /* the new tail is indeterminate: known bytes */
        q[k] = sl->shadow[k] = (unsigned char)k;
    sl->state = S_ALLOC;
    sl->count = 0;
    check_bytes(t, sl, i);
}

/* A register overlapping the live range, not identical: 712 (G5; the bare
 * driver too). Inside the slot's bytes, so the runtime has nothing else to
 * refuse (G10). */
static void op_overlap(struct thr *t, int i)
{
    struct slot *sl = &t->s[i];
    size_t off = rn(t, (unsigned)sl->size);
    size_t n = 1 + rn(t, (unsigned)(sl->size - off));
    unsigned fl = sl->flags;
    if (off == 0 && n == sl->size)
        fl = sl->flags ^ CU_MEMHOSTREGISTER_PORTABLE; /* identical but for the flags */
    note(t, "overlapping register slot %d [%zu,+%zu) flags %u", i, off, n, fl);
    EXPECT(t, cuMemHostRegister_v2(sl->p + off, n, fl), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
}

static void op_own_stream(struct thr *t)
{
    if (t->own_live) {
        note(t, "destroy own stream");
        EXPECT(t, cuStreamDestroy_v2(t->st[OWN]), CUDA_SUCCESS);
        t->own_live = 0;
        for (int k = 0; k < NSLOTS; k++)
            if (t->s[k].dirty == OWN)
                t->s[k].dirty = DIRTY_ANY;
    } else {
        unsigned fl = rn(t, 4) ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT;
        note(t, "create own stream flags %u", fl);
        EXPECT(t, cuStreamCreate(&t->st[OWN], fl), CUDA_SUCCESS);
        t->own_live = 1;
    }
}

/* Release slot i's registered buffer (how: 0 unregister and free, with a
 * memset in flight; 1 free while registered; 2 realloc while registered)
 * and, at random, give the slot its next buffer at once, as a loop over
 * buffers does: allocated before the release or after it, registered and
 * filled by a memset while the release (on safepin's thread) may still be
 * running. malloc puts the next buffer beside the last one: they share a
 * page, which the release must leave pinned. */
static void op_release(struct thr *t, int i, int how)
{
    struct slot *sl = &t->s[i];
    unsigned r = rn(t, 8);
    int next = r < 2 ? 0 : r < 5 ? 1 : 2; /* none, allocated after, before */
    unsigned char *q = NULL;
    size_t qn = 0;
    unsigned char c = (unsigned char)rnd(t);
    if (next == 2 && how != 2) {
        qn = pick_size(t);
        if (!(q = malloc(qn))) {
            fail(t, "malloc(%zu) failed", qn);
            return;
        }
        memset(q, c, qn);
    }
    if (rn(t, 2)) { /* done with it: synchronize, check (its release
                       * need not wait for the device) */
        settle(t, sl);
        check_bytes(t, sl, i);
    } else if (how == 0 && sl->dirty == CLEAN) {
        op_memset(t, i, 0);
    }
    if (how == 0) {
        op_unregister(t, i);
        op_free(t, i);
    } else if (how == 1) {
        op_free(t, i); /* registered, maybe with a memset in flight */
    } else {
        op_realloc(t, i);
    }
    if (!next)
        return;
    if (q) {
        note(t, "next buffer of slot %d: %p %zu (allocated before)", i, (void *)q, qn);
        sl->p = q;
        sl->size = qn;
        sl->shadow = realloc(sl->shadow, qn);
        memset(sl->shadow, c, qn);
        sl->state = S_ALLOC;
        sl->count = 0;
        sl->dirty = CLEAN;
    } else if (sl->state == S_EMPTY) {
        op_alloc(t, i, 1);
    }
    if (sl->state != S_ALLOC)
        return;
    op_register(t, i);
    op_memset(t, i, 1);
}

static void step(struct thr *t)
{
    /* Half the steps stay on the last slot: a buffer's life (allocated,
     * registered, filled, released, the next one in its place) runs in a
     * row as in a loop, so that the next buffer often lands beside the one
     * whose release is running, sharing its page. */
    int i = rn(t, 2) ? t->last : (int)rn(t, (unsigned)t->nslots);
    t->last = i;
    struct slot *sl = &t->s[i];
    unsigned r = rn(t, 100);
    int bare = g_mode == M_BARE;

    if (r < 2) {
        op_own_stream(t);
        return;
    }
    if (r < 4) {
        note(t, "context synchronize");
        EXPECT(t, cuCtxSynchronize(), CUDA_SUCCESS);
        all_clean(t);
        return;
    }
    switch (sl->state) {
    case S_EMPTY:
        op_alloc(t, i, r < 50);
        if (r < 50) { /* a loop's next buffer */
            op_register(t, i);
            op_memset(t, i, 1);
        }
        break;
    case S_ALLOC:
        if (r < 45) {
            op_register(t, i);
            if (rn(t, 2))
                op_memset(t, i, 0);
        } else if (r < 55) {
            op_free(t, i);
        } else if (r < 60) {
            op_realloc(t, i);
        } else if (r < 66) {
            CUdeviceptr dp = 0;
            note(t, "device pointer of unregistered slot %d %p", i, (void *)sl->p);
            EXPECT(t, cuMemHostGetDevicePointer_v2(&dp, sl->p + rn(t, (unsigned)sl->size), 0),
                   CUDA_ERROR_INVALID_VALUE);
        } else if (r < 72) {
            note(t, "unregister unregistered slot %d %p", i, (void *)sl->p);
            CUresult e = cuMemHostUnregister(sl->p);
            int owed = owed_take(sl->p);
            if (e != CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED && !(owed && e == CUDA_SUCCESS))
                fail(t, "cuMemHostUnregister(%p) of memory not registered returned %s (%d), model "
                        "says CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED%s", (void *)sl->p, ename(e),
                     (int)e, owed ? " or CUDA_SUCCESS (freed while registered)" : "");
        } else if (r < 80) {
            settle(t, sl);
            host_fill(t, sl, rn(t, 2));
        } else {
            settle(t, sl);
            note(t, "check slot %d", i);
            check_bytes(t, sl, i);
        }
        break;
    case S_REG:
        if (t->nslots == 1 && !bare && rn(t, 2)) {
            /* the loop over buffers: the next one in its place */
            op_release(t, i, 1 + (int)rn(t, 2));
        } else if (r < 18) {
            op_memset(t, i, 0);
        } else if (r < 28) {
            /* the memset, the synchronize, the bytes */
            int d = op_memset(t, i, 0);
            EXPECT(t, cuStreamSynchronize(t->st[d]), CUDA_SUCCESS);
            for (int k = 0; k < NSLOTS; k++)
                if (t->s[k].dirty == d)
                    t->s[k].dirty = CLEAN;
            note(t, "synchronized stream %d, check slot %d", d, i);
            check_bytes(t, sl, i);
        } else if (r < 34) {
            op_unregister(t, i);
        } else if (r < 40) {
            if (sl->count == 1)
                op_release(t, i, 0);
            else
                op_unregister(t, i);
        } else if (r < 43) {
            note(t, "nested register slot %d count %d dirty %d", i, sl->count, sl->dirty);
            if (bare) {
                EXPECT(t, cuMemHostRegister_v2(sl->p, sl->size, sl->flags),
                       CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
            } else {
                EXPECT(t, cuMemHostRegister_v2(sl->p, sl->size, sl->flags), CUDA_SUCCESS);
                sl->count++;
            }
        } else if (r < 45) {
            op_overlap(t, i);
        } else if (r < 47) {
            note(t, "interior unregister slot %d", i);
            EXPECT(t, cuMemHostUnregister(sl->p + 1 + rn(t, (unsigned)sl->size - 1)),
                   CUDA_ERROR_INVALID_VALUE);
        } else if (r < 69 && bare) {
            /* the bare driver leaks what is freed registered */
            if (sl->count == 1)
                op_release(t, i, 0);
            else
                op_unregister(t, i);
        } else if (r < 59) {
            op_release(t, i, 1);
        } else if (r < 69) {
            op_release(t, i, 2);
        } else if (r < 73) {
            size_t off = rn(t, (unsigned)sl->size);
            CUdeviceptr base = 0, dp = 0;
            note(t, "device pointer of slot %d +%zu", i, off);
            EXPECT(t, cuMemHostGetDevicePointer_v2(&base, sl->p, 0), CUDA_SUCCESS);
            EXPECT(t, cuMemHostGetDevicePointer_v2(&dp, sl->p + off, 0), CUDA_SUCCESS);
            if (!base || dp != base + off)
                fail(t, "device pointer of %p+%zu is 0x%llx, of its base 0x%llx", (void *)sl->p,
                     off, dp, base);
        } else if (r < 88) {
            settle(t, sl);
            note(t, "check slot %d", i);
            check_bytes(t, sl, i);
        } else {
            settle(t, sl);
            host_fill(t, sl, rn(t, 2));
        }
        break;
    }
}

static void *thread_main(void *arg)
{
    struct thr *t = arg;
    EXPECT(t, cuCtxSetCurrent(g_ctx), CUDA_SUCCESS);
    t->st[0] = NULL;
    t->st[1] = CU_STREAM_LEGACY;
    t->st[2] = CU_STREAM_PER_THREAD;
    t->st[3] = g_shared[0];
    t->st[4] = g_shared[1];
    EXPECT(t, cuStreamCreate(&t->st[OWN], CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    t->own_live = 1;
    t->nslots = t->id % 3 == 0 ? 1 : t->id % 3 == 1 ? NSLOTS / 2 : NSLOTS;
    for (t->op = 0; t->op < g_ops && atomic_load(&g_failures) == 0; t->op++)
        step(t);
    atomic_fetch_add(&g_done_ops, t->op);

    /* The end: everything visible, checked (unless a failure stopped the
     * run: it is reported once), released. */
    EXPECT(t, cuCtxSynchronize(), CUDA_SUCCESS);
    all_clean(t);
    int checked = atomic_load(&g_failures) == 0;
    for (int i = 0; i < NSLOTS; i++) {
        struct slot *sl = &t->s[i];
        if (sl->state != S_EMPTY) {
            if (checked)
                check_bytes(t, sl, i);
            while (sl->state == S_REG)
                op_unregister(t, i);
            free(sl->p);
        }
        free(sl->shadow);
    }
    if (t->own_live)
        EXPECT(t, cuStreamDestroy_v2(t->st[OWN]), CUDA_SUCCESS);
    return NULL;
}

int main(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--seed"))
            g_seed = strtoul(argv[i + 1], NULL, 0);
        else if (!strcmp(argv[i], "--ops"))
            g_ops = strtol(argv[i + 1], NULL, 0);
        else if (!strcmp(argv[i], "--threads"))
            g_threads = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--mode"))
            g_mode = !strcmp(argv[i + 1], "async") ? M_ASYNC
                     : !strcmp(argv[i + 1], "sync") ? M_SYNC
                     : !strcmp(argv[i + 1], "bare") ? M_BARE : M_ORDERED;
        else {
            fprintf(stderr, "usage: model_cuda [--seed N] [--ops N] [--threads N] "
                            "[--mode ordered|async|sync|bare]\n");
            return 2;
        }
    }
    if (g_threads < 1 || g_threads > MAXTHREADS)
        g_threads = 3;
    printf("model: seed=%lu ops=%ld threads=%d mode=%s face=cuda\n", g_seed, g_ops, g_threads,
           mode_names[g_mode]);
    fflush(stdout);

    struct thr main_t = { .id = -1 };
    CUdevice dev;
    EXPECT(&main_t, cuInit(0), CUDA_SUCCESS);
    EXPECT(&main_t, cuDeviceGet(&dev, 0), CUDA_SUCCESS);
    EXPECT(&main_t, cuDevicePrimaryCtxRetain(&g_ctx, dev), CUDA_SUCCESS);
    EXPECT(&main_t, cuCtxSetCurrent(g_ctx), CUDA_SUCCESS);
    EXPECT(&main_t, cuStreamCreate(&g_shared[0], CU_STREAM_DEFAULT), CUDA_SUCCESS);
    EXPECT(&main_t, cuStreamCreate(&g_shared[1], CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    if (atomic_load(&g_failures))
        return 1;

    struct thr *t = calloc(g_threads, sizeof *t);
    pthread_t th[MAXTHREADS];
    for (int i = 0; i < g_threads; i++) {
        t[i].id = i;
        t[i].rng = g_seed * 1000003u + (uint64_t)i;
        pthread_create(&th[i], NULL, thread_main, &t[i]);
    }
    for (int i = 0; i < g_threads; i++)
        pthread_join(th[i], NULL);
    EXPECT(&main_t, cuStreamDestroy_v2(g_shared[0]), CUDA_SUCCESS);
    EXPECT(&main_t, cuStreamDestroy_v2(g_shared[1]), CUDA_SUCCESS);
    EXPECT(&main_t, cuDevicePrimaryCtxRelease_v2(dev), CUDA_SUCCESS);
    free(t);
    printf("model: operations=%ld failures=%d\n", atomic_load(&g_done_ops),
           atomic_load(&g_failures));
    if (atomic_load(&g_failures))
        return 1;
    printf("OK\n");
    return 0;
}
