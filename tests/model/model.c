/*
 * model.c - seeded random workloads, checked against a reference model of
 * DESIGN section 2.
 *
 *   model [--seed N] [--ops N] [--threads N] [--mode ordered|async|sync]
 *         [--capture local|global]
 *
 * Run on simhip under safepin (tests/model/run.sh sets SAFEPIN_OPTIONS to
 * the same unregister mode). Each thread owns a few buffer slots and one
 * stream of its own, and shares the null stream, two created streams and the
 * per-thread stream with the others. Every slot has a reference model: its
 * state (empty, allocated, registered with a nesting count, handed to a
 * host function), the exact bytes it must hold (`shadow`, updated when a
 * host write is made or a device write is enqueued) and the one stream whose
 * device writes to it may still be outstanding (`dirty`). Every runtime call
 * is checked against the return code the model predicts, and every host read
 * of a slot (made only where the model says no device write can still be
 * outstanding) against its shadow. Since slots are thread-owned, each
 * thread's model is sequential and deterministic; the threads meet in the
 * streams, the device, the allocator and safepin's registry.
 *
 * Where the model predicts visibility:
 *  - hipStreamSynchronize(s) / hipDeviceSynchronize: writes on s / all done;
 *  - unregister=ordered|sync, a release (count -> 0) made on the program's
 *    thread while no capture was running anywhere: every prior write is done
 *    (G3; a capture lets safepin return at once, so the model then assumes
 *    nothing);
 *  - unregister=async: nothing.
 * Device writes into freed or remapped memory whose release is pending are
 * never checked for their bytes (the program cannot see them) but must not
 * fault (G1/G2) nor land in what the program allocates next (checked through
 * the shadows of later allocations).
 *
 * Captures are thread-local by default. With --capture global they are
 * global-mode captures and every program thread runs in relaxed mode (as a
 * program that captures globally while other threads keep working must):
 * any runtime call that safepin makes on a thread of its own without relaxed
 * mode (its reaper's event queries, refused during a global capture from
 * ROCm 7.0, the rocm7 personality) then invalidates the capture, and
 * hipStreamEndCapture fails.
 *
 * The operation count per thread is a prefix property: rerunning a seed with
 * fewer --ops runs the same program, cut short (run.sh shrinks with it).
 * Output: "model: seed=S ops=N ..." and "OK", or the first mismatches and
 * exit 1.
 */
#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <hip/hip_runtime_api.h>
#include "simhip.h"
#include "owed.h"

#define NSLOTS 6
#define MAXTHREADS 8
/* Stream table per thread: 0 null, 1 shared blocking, 2 shared non-blocking,
 * 3 per-thread, 4 the thread's own (may be destroyed and recreated). */
#define NSTREAMS 5
#define OWN 4
#define CLEAN -1
#define DIRTY_ANY -2 /* outstanding on a destroyed stream: device sync */

enum mode { M_ORDERED, M_ASYNC, M_SYNC };
enum state { S_EMPTY, S_ALLOC, S_REG, S_HOSTFN };
enum kind { K_MALLOC, K_MMAP };

static enum mode g_mode = M_ORDERED;
static int g_global_capture; /* --capture global: global-mode captures, relaxed threads */
static int g_legacy; /* SIMHIP_PERSONALITY=legacy: attributes of unknown memory fail */
static int g_host_type = hipMemoryTypeHost; /* host memory's type: 1 in the 6.x values (rocm7) */
static unsigned long g_seed = 1;
static long g_ops = 300;
static int g_threads = 3;
static hipStream_t g_shared[2];
static atomic_int g_failures;
static atomic_long g_done_ops;
/* Captures running anywhere now / ever begun: an unregister that overlapped
 * one may have returned without waiting (G3, G6). */
static atomic_int g_captures_now;
static atomic_long g_captures_begun;

struct hostfn_ctx {
    unsigned char *p;
    int do_free;      /* 1: free() from the callback, 0: hipHostUnregister */
    int kind;
    size_t size;
    hipError_t rc;
    atomic_int ran;
};

struct slot {
    int state, kind, count;
    unsigned char *p;
    size_t size;
    unsigned char *shadow;
    int dirty;        /* CLEAN, DIRTY_ANY or a stream index */
    int hf_stream;
    struct hostfn_ctx *hf;
};

struct thr {
    int id;
    uint64_t rng;
    long op;
    hipStream_t st[NSTREAMS];
    int own_live;
    struct slot s[NSLOTS];
    void **graph_args;
    size_t ngraph_args;
    char trace[8][96]; /* the last operations, for a failure report */
    unsigned ntrace;
};

struct wargs {
    unsigned char *dst;
    size_t n;
    unsigned val;
    int free_me;
};

/* ---- helpers --------------------------------------------------------- */
static uint64_t rnd(struct thr *t)
{
    /* splitmix64: small, good enough, and the same everywhere */
    uint64_t z = (t->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static unsigned rn(struct thr *t, unsigned n) { return (unsigned)(rnd(t) % n); }

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
    char msg[256];
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

#define EXPECT(t, call, want)                                                  \
    do {                                                                       \
        hipError_t e_ = (call);                                                \
        if (e_ != (want))                                                      \
            fail(t, "%s returned %d, model says %d", #call, (int)e_, (int)(want)); \
    } while (0)


static unsigned char wbyte(unsigned val, size_t i) { return (unsigned char)(val + i * 7u); }

static void write_kernel(void *a)
{
    struct wargs *w = a;
    unsigned char buf[4096];
    for (size_t off = 0; off < w->n; off += sizeof buf) {
        size_t n = w->n - off < sizeof buf ? w->n - off : sizeof buf;
        for (size_t i = 0; i < n; i++)
            buf[i] = wbyte(w->val, off + i);
        simhipDeviceWrite(w->dst + off, buf, n);
    }
    if (w->free_me)
        free(w);
}

static void hostfn(hipStream_t s, hipError_t status, void *user)
{
    (void)s;
    (void)status;
    struct hostfn_ctx *c = user;
    if (c->do_free) {
        if (c->kind == K_MALLOC)
            free(c->p);
        else
            munmap(c->p, c->size);
        c->rc = hipSuccess;
    } else {
        c->rc = hipHostUnregister(c->p);
    }
    atomic_store(&c->ran, 1);
}

/* ---- the model's operations ------------------------------------------ */
static void check_bytes(struct thr *t, struct slot *sl, int i)
{
    if (memcmp(sl->p, sl->shadow, sl->size) == 0)
        return;
    for (size_t k = 0; k < sl->size; k++)
        if (sl->p[k] != sl->shadow[k]) {
            fail(t, "slot %d (%p, %zu bytes): byte %zu is %u, model says %u", i,
                 (void *)sl->p, sl->size, k, sl->p[k], sl->shadow[k]);
            return;
        }
}

/* Make a slot's outstanding writes complete (model: clean). */
static void settle(struct thr *t, struct slot *sl)
{
    if (sl->dirty == CLEAN)
        return;
    if (sl->dirty == DIRTY_ANY) {
        EXPECT(t, hipDeviceSynchronize(), hipSuccess);
        for (int i = 0; i < NSLOTS; i++)
            if (t->s[i].state != S_HOSTFN)
                t->s[i].dirty = CLEAN;
        return;
    }
    int d = sl->dirty;
    EXPECT(t, hipStreamSynchronize(t->st[d]), hipSuccess);
    for (int i = 0; i < NSLOTS; i++)
        if (t->s[i].dirty == d)
            t->s[i].dirty = CLEAN;
}

static void host_fill(struct thr *t, struct slot *sl)
{
    unsigned v = (unsigned)rnd(t);
    for (size_t k = 0; k < sl->size; k++)
        sl->shadow[k] = (unsigned char)(v ^ (k * 13u));
    memcpy(sl->p, sl->shadow, sl->size);
}

static size_t pick_size(struct thr *t, int kind)
{
    unsigned r = rn(t, 100);
    size_t pg = 4096;
    if (kind == K_MMAP)
        return pg * (1 + rn(t, r < 90 ? 8 : 300));
    if (r < 50)
        return 1 + rn(t, 3000);
    if (r < 90)
        return pg * (1 + rn(t, 8)) + rn(t, 64);
    return 256 * 1024 + rn(t, 1024 * 1024); /* glibc: an mmap'd chunk */
}

static void op_alloc(struct thr *t, int i)
{
    struct slot *sl = &t->s[i];
    sl->kind = rn(t, 4) == 0 ? K_MMAP : K_MALLOC;
    sl->size = pick_size(t, sl->kind);
    if (sl->kind == K_MALLOC) {
        sl->p = malloc(sl->size);
    } else {
        sl->p = mmap(NULL, sl->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (sl->p == MAP_FAILED)
            sl->p = NULL;
    }
    if (!sl->p) {
        fail(t, "allocation of %zu bytes failed", sl->size);
        return;
    }
    sl->shadow = realloc(sl->shadow, sl->size);
    host_fill(t, sl);
    sl->state = S_ALLOC;
    sl->count = 0;
    sl->dirty = CLEAN;
    note(t, "alloc slot %d %s %p %zu", i, sl->kind ? "mmap" : "malloc", (void *)sl->p, sl->size);
}

static void release_memory(struct slot *sl)
{
    if (sl->kind == K_MALLOC)
        free(sl->p);
    else
        munmap(sl->p, sl->size);
}

static void op_free(struct thr *t, int i)
{
    struct slot *sl = &t->s[i];
    note(t, "free slot %d %p (state %d count %d dirty %d)", i, (void *)sl->p, sl->state,
         sl->count, sl->dirty);
    if (sl->state == S_REG)
        owed_set(sl->p, 1);
    release_memory(sl); /* registered: freed-while-registered, kept alive (G2, G7) */
    sl->state = S_EMPTY;
    sl->p = NULL;
}

/* Is any capture running, or has one begun, since *epoch was read? */
static int capture_overlapped(long epoch)
{
    return atomic_load(&g_captures_now) != 0 || atomic_load(&g_captures_begun) != epoch;
}

static void op_unregister(struct thr *t, int i)
{
    struct slot *sl = &t->s[i];
    long epoch = atomic_load(&g_captures_begun);
    int quiet = atomic_load(&g_captures_now) == 0;
    note(t, "unregister slot %d %p count %d", i, (void *)sl->p, sl->count);
    EXPECT(t, hipHostUnregister(sl->p), hipSuccess);
    if (--sl->count > 0)
        return;
    sl->state = S_ALLOC;
    if (g_mode != M_ASYNC && quiet && !capture_overlapped(epoch))
        for (int k = 0; k < NSLOTS; k++) /* G3: every prior device op is done */
            if (t->s[k].state != S_HOSTFN)
                t->s[k].dirty = CLEAN;
}

/* A write on stream d keeps per-slot order: a slot is dirty on one stream. */
static void op_device_write(struct thr *t, int i)
{
    struct slot *sl = &t->s[i];
    int d = rn(t, NSTREAMS);
    if (d == OWN && !t->own_live)
        d = 0;
    if (sl->dirty == DIRTY_ANY)
        settle(t, sl);
    if (sl->dirty != CLEAN)
        d = sl->dirty;
    size_t off = rn(t, (unsigned)sl->size);
    size_t n = 1 + rn(t, (unsigned)(sl->size - off));
    struct wargs *w = malloc(sizeof *w);
    *w = (struct wargs){ sl->p + off, n, (unsigned)rnd(t), 1 };
    for (size_t k = 0; k < n; k++)
        sl->shadow[off + k] = wbyte(w->val, k);
    note(t, "write slot %d [%zu,+%zu) stream %d", i, off, n, d);
    EXPECT(t, simhipLaunchKernel(t->st[d], write_kernel, w), hipSuccess);
    sl->dirty = d;
}

static void op_attr(struct thr *t, int i)
{
    struct slot *sl = &t->s[i];
    hipPointerAttribute_t a;
    memset(&a, 0x5a, sizeof a);
    size_t off = rn(t, (unsigned)sl->size);
    hipError_t e = hipPointerGetAttributes(&a, sl->p + off);
    note(t, "attributes slot %d +%zu state %d -> %d", i, off, sl->state, (int)e);
    if (sl->state == S_REG) {
        if (e != hipSuccess || (int)a.memoryType != g_host_type || a.hostPointer != sl->p + off)
            fail(t, "attributes of registered %p+%zu: rc %d type %d host %p", (void *)sl->p, off,
                 (int)e, (int)a.memoryType, a.hostPointer);
    } else if (g_legacy) {
        if (e != hipErrorInvalidValue)
            fail(t, "attributes of unregistered %p: rc %d, model says %d", (void *)sl->p, (int)e,
                 (int)hipErrorInvalidValue);
    } else if (e != hipSuccess || (int)a.memoryType != 0 || a.hostPointer != NULL ||
               a.devicePointer != NULL) {
        fail(t, "attributes of unregistered %p: rc %d type %d host %p device %p", (void *)sl->p,
             (int)e, (int)a.memoryType, a.hostPointer, a.devicePointer);
    }
}

static void op_realloc(struct thr *t, int i)
{
    struct slot *sl = &t->s[i];
    settle(t, sl); /* realloc copies the bytes as they are at the call */
    size_t nsz = pick_size(t, K_MALLOC);
    note(t, "realloc slot %d %p state %d -> %zu", i, (void *)sl->p, sl->state, nsz);
    if (sl->state == S_REG)
        owed_set(sl->p, 1);
    unsigned char *q = realloc(sl->p, nsz);
    if (!q) {
        fail(t, "realloc to %zu failed", nsz);
        return;
    }
    sl->p = q;
    sl->shadow = realloc(sl->shadow, nsz);
    if (nsz > sl->size)
        memset(sl->shadow + sl->size, 0, nsz - sl->size);
    size_t old = sl->size;
    sl->size = nsz;
    if (nsz > old) /* the new tail is indeterminate: give it known bytes */
        for (size_t k = old; k < nsz; k++)
            q[k] = sl->shadow[k] = (unsigned char)k;
    check_bytes(t, sl, i);
    sl->state = S_ALLOC;
    sl->count = 0;
}

/* A fixed anonymous mapping over the slot's own mapping (G2: the new mapping
 * is never touched by old device work nor by a deferred unmap). */
static void op_fixed_mmap(struct thr *t, int i)
{
    struct slot *sl = &t->s[i];
    note(t, "fixed mmap over slot %d %p state %d dirty %d", i, (void *)sl->p, sl->state, sl->dirty);
    if (sl->state == S_REG)
        owed_set(sl->p, 1);
    void *q = mmap(sl->p, sl->size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (q != sl->p) {
        fail(t, "mmap(MAP_FIXED) at %p returned %p (errno %d)", (void *)sl->p, q, errno);
        return;
    }
    memset(sl->shadow, 0, sl->size);
    sl->state = S_ALLOC;
    sl->count = 0;
    sl->dirty = CLEAN; /* old writes must not reach the new mapping */
    check_bytes(t, sl, i);
    host_fill(t, sl);
}

static void op_hostfn(struct thr *t, int i)
{
    struct slot *sl = &t->s[i];
    int d = sl->dirty >= 0 ? sl->dirty : (int)rn(t, NSTREAMS);
    if (d == OWN && !t->own_live)
        d = 0;
    if (sl->dirty == DIRTY_ANY)
        settle(t, sl);
    struct hostfn_ctx *c = calloc(1, sizeof *c);
    c->p = sl->p;
    c->kind = sl->kind;
    c->size = sl->size;
    c->do_free = rn(t, 3) == 0;
    if (c->do_free)
        owed_set(sl->p, 1); /* freed while registered, in the host function */
    note(t, "host function on stream %d: %s slot %d %p", d, c->do_free ? "free" : "unregister",
         i, (void *)sl->p);
    EXPECT(t, hipStreamAddCallback(t->st[d], hostfn, c, 0), hipSuccess);
    sl->state = S_HOSTFN;
    sl->hf = c;
    sl->hf_stream = d;
}

static void resolve_hostfn(struct thr *t, int i)
{
    struct slot *sl = &t->s[i];
    int d = sl->hf_stream;
    EXPECT(t, hipStreamSynchronize(t->st[d]), hipSuccess);
    for (int k = 0; k < NSLOTS; k++)
        if (t->s[k].dirty == d)
            t->s[k].dirty = CLEAN;
    struct hostfn_ctx *c = sl->hf;
    if (!atomic_load(&c->ran))
        fail(t, "host function on slot %d did not run by hipStreamSynchronize", i);
    if (c->rc != hipSuccess)
        fail(t, "hipHostUnregister in a host function returned %d, model says 0", (int)c->rc);
    note(t, "host function of slot %d done (%s)", i, c->do_free ? "freed" : "unregistered");
    if (c->do_free) {
        sl->state = S_EMPTY;
        sl->p = NULL;
    } else {
        sl->state = S_ALLOC;
        sl->count = 0;
        /* no visibility promise from a host function's unregister (G3, G8);
         * the slot stays dirty on another stream if it was */
    }
    free(c);
    sl->hf = NULL;
}

/* Capture a write into a graph on the thread's own stream, then maybe run it. */
static void op_capture(struct thr *t, int i)
{
    struct slot *sl = &t->s[i];
    if (!t->own_live)
        return;
    if (sl->dirty != CLEAN && sl->dirty != OWN)
        settle(t, sl);
    hipStream_t s = t->st[OWN];
    atomic_fetch_add(&g_captures_now, 1);
    atomic_fetch_add(&g_captures_begun, 1);
    EXPECT(t, hipStreamBeginCapture(s, g_global_capture ? hipStreamCaptureModeGlobal
                                                       : hipStreamCaptureModeThreadLocal),
           hipSuccess);
    size_t off = rn(t, (unsigned)sl->size);
    size_t n = 1 + rn(t, (unsigned)(sl->size - off));
    struct wargs *w = malloc(sizeof *w);
    *w = (struct wargs){ sl->p + off, n, (unsigned)rnd(t), 0 };
    t->graph_args = realloc(t->graph_args, (t->ngraph_args + 1) * sizeof *t->graph_args);
    t->graph_args[t->ngraph_args++] = w;
    EXPECT(t, simhipLaunchKernel(s, write_kernel, w), hipSuccess);
    hipGraph_t g = NULL;
    EXPECT(t, hipStreamEndCapture(s, &g), hipSuccess);
    atomic_fetch_sub(&g_captures_now, 1);
    int run = rn(t, 2);
    note(t, "capture write slot %d [%zu,+%zu) %s", i, off, n, run ? "launched" : "dropped");
    if (g && run) {
        hipGraphExec_t x = NULL;
        EXPECT(t, hipGraphInstantiate(&x, g, NULL, NULL, 0), hipSuccess);
        if (x) {
            EXPECT(t, hipGraphLaunch(x, s), hipSuccess);
            for (size_t k = 0; k < n; k++)
                sl->shadow[off + k] = wbyte(w->val, k);
            sl->dirty = OWN;
            EXPECT(t, hipGraphExecDestroy(x), hipSuccess);
        }
    }
    if (g)
        EXPECT(t, hipGraphDestroy(g), hipSuccess);
}

static void op_own_stream(struct thr *t)
{
    if (t->own_live) {
        note(t, "destroy own stream");
        EXPECT(t, hipStreamDestroy(t->st[OWN]), hipSuccess);
        t->own_live = 0;
        for (int k = 0; k < NSLOTS; k++) {
            if (t->s[k].dirty == OWN)
                t->s[k].dirty = DIRTY_ANY;
        }
    } else {
        unsigned fl = rn(t, 2) ? hipStreamNonBlocking : hipStreamDefault;
        note(t, "create own stream flags %u", fl);
        EXPECT(t, hipStreamCreateWithFlags(&t->st[OWN], fl), hipSuccess);
        t->own_live = 1;
    }
}

static void step(struct thr *t)
{
    int i = (int)rn(t, NSLOTS);
    struct slot *sl = &t->s[i];
    unsigned r = rn(t, 100);

    if (r < 3) {
        /* a hipStreamDestroy with this stream's host function still queued
         * would be the program's own bug: resolve first */
        if (t->own_live)
            for (int k = 0; k < NSLOTS; k++)
                if (t->s[k].state == S_HOSTFN && t->s[k].hf_stream == OWN)
                    resolve_hostfn(t, k);
        op_own_stream(t);
        return;
    }
    if (r < 5) {
        note(t, "device synchronize");
        EXPECT(t, hipDeviceSynchronize(), hipSuccess);
        for (int k = 0; k < NSLOTS; k++)
            if (t->s[k].state != S_HOSTFN)
                t->s[k].dirty = CLEAN;
        return;
    }
    switch (sl->state) {
    case S_EMPTY:
        op_alloc(t, i);
        break;
    case S_HOSTFN:
        resolve_hostfn(t, i);
        break;
    case S_ALLOC:
        if (r < 40) {
            note(t, "register slot %d %p %zu", i, (void *)sl->p, sl->size);
            EXPECT(t, hipHostRegister(sl->p, sl->size, 0), hipSuccess);
            owed_set(sl->p, 0);
            sl->state = S_REG;
            sl->count = 1;
        } else if (r < 50) {
            op_free(t, i);
        } else if (r < 56 && sl->kind == K_MALLOC) {
            op_realloc(t, i);
        } else if (r < 60 && sl->kind == K_MMAP) {
            op_fixed_mmap(t, i);
        } else if (r < 68) {
            op_attr(t, i);
        } else if (r < 74) {
            note(t, "unregister unregistered slot %d %p", i, (void *)sl->p);
            hipError_t e = hipHostUnregister(sl->p);
            int owed = owed_take(sl->p);
            if (e != hipErrorHostMemoryNotRegistered && !(owed && e == hipSuccess))
                fail(t, "hipHostUnregister(%p) of memory not registered returned %d, model says "
                        "%d%s", (void *)sl->p, (int)e, (int)hipErrorHostMemoryNotRegistered,
                     owed ? " or 0 (freed while registered)" : "");
        } else if (r < 80) {
            settle(t, sl);
            host_fill(t, sl);
        } else {
            settle(t, sl);
            check_bytes(t, sl, i);
        }
        break;
    case S_REG:
        if (r < 30) {
            op_device_write(t, i);
        } else if (r < 45) {
            op_unregister(t, i);
        } else if (r < 48) {
            note(t, "nested register slot %d count %d", i, sl->count);
            EXPECT(t, hipHostRegister(sl->p, sl->size, 0), hipSuccess);
            sl->count++;
        } else if (r < 51 && sl->size > 1) {
            note(t, "overlapping register slot %d", i);
            EXPECT(t, hipHostRegister(sl->p, sl->size / 2, 0), hipErrorHostMemoryAlreadyRegistered);
        } else if (r < 54 && sl->size > 1) {
            note(t, "interior unregister slot %d", i);
            EXPECT(t, hipHostUnregister(sl->p + 1 + rn(t, (unsigned)sl->size - 1)),
                   hipErrorHostMemoryNotRegistered);
        } else if (r < 60) {
            op_attr(t, i);
        } else if (r < 64) {
            op_free(t, i);
        } else if (r < 67 && sl->kind == K_MALLOC) {
            op_realloc(t, i);
        } else if (r < 70 && sl->kind == K_MMAP) {
            op_fixed_mmap(t, i);
        } else if (r < 75 && sl->count == 1) {
            op_hostfn(t, i);
        } else if (r < 80) {
            op_capture(t, i);
        } else if (r < 88) {
            settle(t, sl);
            note(t, "check slot %d", i);
            check_bytes(t, sl, i);
        } else {
            settle(t, sl);
            host_fill(t, sl);
        }
        break;
    }
}

static void *thread_main(void *arg)
{
    struct thr *t = arg;
    if (g_global_capture) {
        hipStreamCaptureMode m = hipStreamCaptureModeRelaxed;
        EXPECT(t, hipThreadExchangeStreamCaptureMode(&m), hipSuccess);
    }
    t->st[0] = 0;
    t->st[1] = g_shared[0];
    t->st[2] = g_shared[1];
    t->st[3] = hipStreamPerThread;
    EXPECT(t, hipStreamCreate(&t->st[OWN]), hipSuccess);
    t->own_live = 1;
    for (t->op = 0; t->op < g_ops && atomic_load(&g_failures) == 0; t->op++)
        step(t);
    atomic_fetch_add(&g_done_ops, t->op);

    /* The end: everything visible, checked, released. */
    for (int i = 0; i < NSLOTS; i++)
        if (t->s[i].state == S_HOSTFN)
            resolve_hostfn(t, i);
    EXPECT(t, hipDeviceSynchronize(), hipSuccess);
    for (int i = 0; i < NSLOTS; i++) {
        struct slot *sl = &t->s[i];
        sl->dirty = CLEAN;
        if (sl->state == S_EMPTY)
            continue;
        check_bytes(t, sl, i);
        while (sl->state == S_REG)
            op_unregister(t, i);
        release_memory(sl);
        free(sl->shadow);
    }
    if (t->own_live)
        EXPECT(t, hipStreamDestroy(t->st[OWN]), hipSuccess);
    for (size_t k = 0; k < t->ngraph_args; k++)
        free(t->graph_args[k]);
    free(t->graph_args);
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
        else if (!strcmp(argv[i], "--capture"))
            g_global_capture = !strcmp(argv[i + 1], "global");
        else if (!strcmp(argv[i], "--mode"))
            g_mode = !strcmp(argv[i + 1], "async") ? M_ASYNC
                     : !strcmp(argv[i + 1], "sync") ? M_SYNC : M_ORDERED;
        else {
            fprintf(stderr, "usage: model [--seed N] [--ops N] [--threads N] [--mode M] "
                            "[--capture local|global]\n");
            return 2;
        }
    }
    if (g_threads < 1 || g_threads > MAXTHREADS)
        g_threads = 3;
    const char *pers = getenv("SIMHIP_PERSONALITY");
    g_legacy = pers && !strcmp(pers, "legacy");
    int rocm7 = pers && !strcmp(pers, "rocm7");
    if (rocm7)
        g_host_type = 1; /* hipMemoryTypeHost of HIP 6.0+ */
    printf("model: seed=%lu ops=%ld threads=%d mode=%s personality=%s capture=%s\n", g_seed,
           g_ops, g_threads, g_mode == M_ASYNC ? "async" : g_mode == M_SYNC ? "sync" : "ordered",
           g_legacy ? "legacy" : rocm7 ? "rocm7" : "current", g_global_capture ? "global" : "local");
    fflush(stdout);

    struct thr *t = calloc(g_threads, sizeof *t);
    struct thr main_t = { .id = -1 };
    EXPECT(&main_t, hipStreamCreate(&g_shared[0]), hipSuccess);
    EXPECT(&main_t, hipStreamCreateWithFlags(&g_shared[1], hipStreamNonBlocking), hipSuccess);
    pthread_t th[MAXTHREADS];
    for (int i = 0; i < g_threads; i++) {
        t[i].id = i;
        t[i].rng = g_seed * 1000003u + (uint64_t)i;
        pthread_create(&th[i], NULL, thread_main, &t[i]);
    }
    for (int i = 0; i < g_threads; i++)
        pthread_join(th[i], NULL);
    EXPECT(&main_t, hipStreamDestroy(g_shared[0]), hipSuccess);
    EXPECT(&main_t, hipStreamDestroy(g_shared[1]), hipSuccess);
    free(t);
    printf("model: operations=%ld failures=%d\n", atomic_load(&g_done_ops),
           atomic_load(&g_failures));
    if (atomic_load(&g_failures))
        return 1;
    printf("OK\n");
    return 0;
}
