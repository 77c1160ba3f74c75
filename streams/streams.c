/*
 * streams.c - the streams markers must cover, captures, destroyed streams'
 * tail markers, and marker sets (see streams.h).
 */
#include "streams.h"
#include "backend.h"
#include "diag.h"
#include "registry.h"

#include <pthread.h>
#include <string.h>
#include <unistd.h>


/* An event several owners wait on (pre-capture events, tail markers). */
typedef struct shared_ev {
    hipEvent_t ev;
    int refs;
    int orphan;            /* on S.orphans (holds one ref); lock held */
    int done;              /* known complete; atomic (set without the lock) */
    struct shared_ev *next;
} shared_ev;

typedef struct stream_ent {
    hipStream_t s;
    unsigned flags;
    int device;
    unsigned capturing : 1;  /* the runtime said so */
    unsigned foreign : 1;    /* not created through the hooks */
    unsigned retiring : 1;   /* its destroy was handed to the reaper */
    int begin_pending;       /* a capture begin is between its event and the runtime's answer */
    pthread_t capturer;      /* thread that began the capture (per-thread streams: the key) */
    shared_ev *pre;          /* recorded just before the current capture began */
    struct stream_ent *next;
} stream_ent;

static struct {
    stream_ent *streams;
    shared_ev *orphans;      /* tail markers of destroyed streams */
    size_t n_orphans, prune_at;
    shared_ev *dead;         /* refs 0: destroyed outside the lock */
    int ndev;
    int n_capturing;
    int n_unsettled;         /* capture begins in progress: sets wait */
    int marking;             /* sets being recorded: begins and destroys wait */
    int n_retiring;
} S;

enum mark_kind { MK_NULL, MK_STREAM, MK_SHARED };

typedef struct mark {
    enum mark_kind kind;
    int device;
    hipStream_t s;
    hipEvent_t ev;           /* own event (MK_NULL, MK_STREAM), NULL: idle */
    shared_ev *sh;           /* MK_SHARED */
} mark;

struct sp_marks {
    int reserve;             /* the thread's reserve set (not allocated) */
    int n;
    int ndev;
    int saw_capture;
    int incomplete;          /* captured stream whose earlier work has no event */
    int n_capturing;         /* streams capturing when the set was taken */
    mark m[];
};

/* ---- helpers ------------------------------------------------------------- */

hipStreamCaptureMode sp_relaxed_enter(void)
{
    hipStreamCaptureMode mode = hipStreamCaptureModeRelaxed;
    if (sp_real.hipThreadExchangeStreamCaptureMode)
        sp_real.hipThreadExchangeStreamCaptureMode(&mode);
    return mode;
}

void sp_relaxed_leave(hipStreamCaptureMode old)
{
    if (sp_real.hipThreadExchangeStreamCaptureMode)
        sp_real.hipThreadExchangeStreamCaptureMode(&old);
}

static int is_per_thread(hipStream_t s) { return s == hipStreamPerThread; }

static stream_ent **find_stream(hipStream_t s)
{
    stream_ent **pp = &S.streams;
    pthread_t self = pthread_self();
    while (*pp && ((*pp)->s != s || (is_per_thread(s) && !pthread_equal((*pp)->capturer, self))))
        pp = &(*pp)->next;
    return pp;
}

/* Lock held. */
static void unref(shared_ev *e)
{
    if (e && --e->refs == 0) {
        e->next = S.dead;
        /* atomic: flush_dead peeks at it without the lock */
        __atomic_store_n(&S.dead, e, __ATOMIC_RELAXED);
    }
}

/* Lock NOT held; never inside a host function. Destroys dead events. */
static void flush_dead(void)
{
    if (sp_tls_in_hostfn || !__atomic_load_n(&S.dead, __ATOMIC_RELAXED))
        return;
    sp_lock();
    shared_ev *d = S.dead;
    __atomic_store_n(&S.dead, NULL, __ATOMIC_RELAXED);
    sp_unlock();
    while (d) {
        shared_ev *next = d->next;
        if (d->ev && sp_real.hipEventDestroy)
            sp_real.hipEventDestroy(d->ev);
        sp_mem_free(d);
        d = next;
    }
}

/* A new event recorded on s (relaxed mode), or NULL. Lock NOT held. */
static hipEvent_t record_on(hipStream_t s)
{
    hipEvent_t ev = NULL;
    if (sp_real.hipEventCreateWithFlags(&ev, hipEventDisableTiming) != hipSuccess)
        return NULL;
    if (sp_real.hipEventRecord(ev, s) != hipSuccess) {
        sp_real.hipEventDestroy(ev);
        return NULL;
    }
    return ev;
}

static shared_ev *new_shared(hipEvent_t ev)
{
    if (!ev)
        return NULL;
    shared_ev *e = sp_mem_calloc(1, sizeof(*e));
    if (!e) {
        sp_real.hipEventDestroy(ev);
        return NULL;
    }
    e->ev = ev;
    e->refs = 1;
    return e;
}

/* ---- devices and streams ------------------------------------------------- */

void sp_streams_init_devices(void)
{
    int n = 0;
    if (!sp_real.hipGetDeviceCount || sp_real.hipGetDeviceCount(&n) != hipSuccess || n < 1)
        n = 1;
    sp_lock();
    S.ndev = n;
    sp_unlock();
}

int sp_streams_add(hipStream_t s, unsigned flags, int device)
{
    stream_ent *e = sp_mem_calloc(1, sizeof(*e));
    if (!e) {
        sp_log(SP_LOG_ERROR, "runtime-error",
               "out of memory: stream %p cannot be tracked; its create fails with "
               "hipErrorOutOfMemory", (void *)s);
        return -1;
    }
    e->s = s;
    e->flags = flags;
    e->device = device;
    e->next = S.streams;
    S.streams = e;
    return 0;
}

int sp_streams_is_capturing(hipStream_t s)
{
    stream_ent *e = *find_stream(s);
    return e && e->capturing;
}

int sp_streams_thread_captures(void)
{
    pthread_t self = pthread_self();
    for (stream_ent *e = S.streams; e; e = e->next)
        if (e->capturing && pthread_equal(e->capturer, self))
            return 1;
    return 0;
}

/* Lock held: unlink and free e, releasing its pre-capture event. */
static void drop_entry(stream_ent **pp)
{
    stream_ent *e = *pp;
    *pp = e->next;
    if (e->capturing)
        S.n_capturing--;
    if (e->retiring)
        S.n_retiring--;
    unref(e->pre);
    sp_mem_free(e);
    sp_lock_broadcast();
}

/* Lock held, then released and taken again: query the orphans and drop the
 * completed ones, when there are twice as many as after the last pass. */
static void prune_orphans(void)
{
    if (S.n_orphans < S.prune_at || S.n_orphans < 64)
        return;
    size_t n = S.n_orphans;
    shared_ev **v = sp_mem_alloc(n * sizeof(*v));
    if (!v)
        return;
    size_t i = 0;
    for (shared_ev *o = S.orphans; o && i < n; o = o->next) {
        o->refs++;
        v[i++] = o;
    }
    n = i;
    sp_unlock();
    hipStreamCaptureMode old = sp_relaxed_enter();
    for (i = 0; i < n; i++)
        if (sp_real.hipEventQuery && sp_real.hipEventQuery(v[i]->ev) == hipSuccess)
            __atomic_store_n(&v[i]->done, 1, __ATOMIC_RELAXED);
    sp_relaxed_leave(old);
    sp_lock();
    for (shared_ev **pp = &S.orphans; *pp;) {
        shared_ev *o = *pp;
        if (__atomic_load_n(&o->done, __ATOMIC_RELAXED)) {
            *pp = o->next;
            o->orphan = 0;
            S.n_orphans--;
            unref(o);
        } else {
            pp = &o->next;
        }
    }
    for (i = 0; i < n; i++)
        unref(v[i]);
    sp_mem_free(v);
    S.prune_at = 2 * S.n_orphans;
}

int sp_streams_destroy(hipStream_t s)
{
    if (!s || is_per_thread(s))
        return 0;
    sp_lock();
    stream_ent *e = *find_stream(s);
    if (!e) {
        sp_unlock();
        return 0;
    }
    if (sp_tls_in_hostfn) {
        /* No runtime call here: the reaper records the tail and destroys. */
        int handed = !e->retiring;
        if (handed) {
            e->retiring = 1;
            S.n_retiring++;
        }
        sp_unlock();
        return handed;
    }
    int capturing = e->capturing;
    sp_unlock();

    /* The work queued so far stays covered by a tail marker (a capturing
     * stream's captured work never runs: its pre-capture event covers it). */
    hipEvent_t tail = NULL;
    if (!capturing) {
        hipStreamCaptureMode old = sp_relaxed_enter();
        tail = record_on(s);
        sp_relaxed_leave(old);
    }
    shared_ev *sh = new_shared(tail);

    sp_lock();
    while (S.marking)
        sp_lock_wait();
    stream_ent **pp = find_stream(s);
    if (*pp) {
        stream_ent *cur = *pp;
        if (cur->capturing && !sh) {
            sh = cur->pre;
            cur->pre = NULL;
        }
        drop_entry(pp);
    }
    if (sh) {
        sh->orphan = 1;
        sh->next = S.orphans;
        S.orphans = sh;
        S.n_orphans++;
    }
    prune_orphans();
    sp_unlock();
    flush_dead();
    return 0;
}

int sp_streams_has_work(void) { return S.n_retiring > 0 || S.dead != NULL; }

void sp_streams_sizes(size_t *streams, size_t *orphans)
{
    size_t n = 0;
    for (stream_ent *e = S.streams; e; e = e->next)
        n++;
    *streams = n;
    *orphans = S.n_orphans;
}

void sp_streams_service(void)
{
    for (;;) {
        sp_lock();
        hipStream_t s = NULL;
        for (stream_ent *e = S.streams; e; e = e->next)
            if (e->retiring) {
                s = e->s;
                break;
            }
        sp_unlock();
        if (!s)
            break;
        sp_streams_destroy(s);
        if (sp_real.hipStreamDestroy)
            sp_real.hipStreamDestroy(s);
    }
    flush_dead();
}

/* ---- captures -------------------------------------------------------------- */

/* What the runtime says of s: 1 capturing (active or invalidated), 0 not,
 * -1 unknown (no query possible). Lock NOT held. */
static int runtime_capturing(hipStream_t s)
{
    if (!sp_real.hipStreamIsCapturing || sp_tls_in_hostfn)
        return -1;
    hipStreamCaptureStatus st = hipStreamCaptureStatusNone;
    hipStreamCaptureMode old = sp_relaxed_enter();
    hipError_t e = sp_real.hipStreamIsCapturing(s, &st);
    sp_relaxed_leave(old);
    if (e != hipSuccess)
        return -1;
    return st != hipStreamCaptureStatusNone;
}

/* Lock held: make e's state what the runtime said. */
static void set_capturing(stream_ent *e, int capturing, shared_ev **pre)
{
    if (capturing && !e->capturing) {
        e->capturing = 1;
        e->capturer = pthread_self();
        S.n_capturing++;
        unref(e->pre);
        e->pre = *pre;
        *pre = NULL;
    } else if (!capturing && e->capturing) {
        e->capturing = 0;
        S.n_capturing--;
        unref(e->pre);
        e->pre = NULL;
    }
}

hipError_t sp_streams_begin_capture(hipStream_t s, hipStreamCaptureMode mode)
{
    sp_lock();
    while (S.marking)
        sp_lock_wait();
    stream_ent **pp = find_stream(s);
    stream_ent *e = *pp;
    if (!e) {
        e = sp_mem_calloc(1, sizeof(*e));
        if (e) {
            e->s = s;
            e->foreign = 1;
            /* Unknown flags: marked as if non-blocking (harmless if not);
             * a per-thread stream is blocking and belongs to this thread. */
            e->flags = is_per_thread(s) ? 0 : hipStreamNonBlocking;
            e->capturer = pthread_self();
            e->next = S.streams;
            S.streams = e;
        }
    }
    if (!e) {
        sp_unlock();
        return sp_real.hipStreamBeginCapture(s, mode);
    }
    int already = e->capturing;
    e->begin_pending++;
    S.n_unsettled++;
    sp_unlock();

    /* The work enqueued before the capture still runs: an event covers it. */
    shared_ev *pre = NULL;
    if (!already && !sp_tls_in_hostfn) {
        hipStreamCaptureMode old = sp_relaxed_enter();
        pre = new_shared(record_on(s));
        sp_relaxed_leave(old);
    }
    hipError_t r = sp_real.hipStreamBeginCapture(s, mode);
    int capturing = r == hipSuccess ? 1 : runtime_capturing(s);
    if (capturing < 0)
        capturing = already;

    sp_lock();
    pp = find_stream(s);
    e = *pp;
    if (e) {
        set_capturing(e, capturing, &pre);
        e->begin_pending--;
        if (e->foreign && !e->capturing && !e->begin_pending)
            drop_entry(pp);
    }
    S.n_unsettled--;
    unref(pre);
    sp_lock_broadcast();
    sp_unlock();
    flush_dead();
    return r;
}

hipError_t sp_streams_end_capture(hipStream_t s, hipGraph_t *graph)
{
    hipError_t r = sp_real.hipStreamEndCapture(s, graph);
    int capturing = runtime_capturing(s);
    if (capturing < 0) /* ended, or invalidated and ended */
        capturing = !(r == hipSuccess || r == hipErrorStreamCaptureInvalidated);
    sp_lock();
    stream_ent **pp = find_stream(s);
    stream_ent *e = *pp;
    if (e) {
        shared_ev *none = NULL;
        set_capturing(e, capturing, &none);
        if (e->foreign && !e->capturing && !e->begin_pending)
            drop_entry(pp);
        sp_lock_broadcast();
    }
    sp_unlock();
    flush_dead();
    return r;
}

void sp_marks_wait_captures(int *stop)
{
    int reported = 0;
    while ((S.n_capturing > 0 || S.n_unsettled > 0) && !*stop) {
        if (!reported) {
            SP_COUNT(capture_deferrals);
            sp_diag(SP_CAPTURE_DEFERRED, NULL,
                    "%d stream(s) capturing and the runtime refused a release marker: the release "
                    "waits for the capture to end",
                    S.n_capturing);
            reported = 1;
        }
        sp_lock_wait();
    }
}

/* ---- marker sets ----------------------------------------------------------- */

/* A marker set for when safepin's own allocation fails: one per thread (a
 * thread holds at most one set at a time), for up to SP_MARKS_RESERVE
 * streams. Without it, out of memory would mean a release, or an ordered
 * unregister's visibility, with nothing to wait on. */
#define SP_MARKS_RESERVE 64
static __thread union {
    sp_marks m;
    unsigned char bytes[sizeof(sp_marks) + SP_MARKS_RESERVE * sizeof(mark)];
} tls_reserve;
static __thread int tls_reserve_used;

static sp_marks *marks_alloc(size_t cap)
{
    sp_marks *m = sp_mem_alloc(sizeof(*m) + cap * sizeof(mark));
    if (m) {
        m->reserve = 0;
        return m;
    }
    if (cap > SP_MARKS_RESERVE || tls_reserve_used)
        return NULL;
    tls_reserve_used = 1;
    m = &tls_reserve.m;
    m->reserve = 1;
    return m;
}

sp_marks *sp_marks_take(void)
{
    while (S.n_unsettled > 0)
        sp_lock_wait();
    int ndev = S.ndev > 0 ? S.ndev : 1;
    size_t cap = (size_t)ndev + S.n_orphans;
    for (stream_ent *e = S.streams; e; e = e->next)
        cap++;
    sp_marks *m = marks_alloc(cap);
    if (!m)
        return NULL;
    m->n = 0;
    m->ndev = ndev;
    m->saw_capture = 0;
    m->incomplete = 0;
    m->n_capturing = S.n_capturing;
    for (int d = 0; d < ndev; d++)
        m->m[m->n++] = (mark){MK_NULL, d, NULL, NULL, NULL};
    for (stream_ent *e = S.streams; e; e = e->next) {
        if (e->capturing) {
            m->saw_capture = 1;
            /* Its pre-capture work (blocking ones: the null marker covers it). */
            if (!(e->flags & hipStreamNonBlocking))
                continue;
            if (e->pre) {
                e->pre->refs++;
                m->m[m->n++] = (mark){MK_SHARED, e->device, NULL, NULL, e->pre};
            } else {
                m->incomplete = 1;
            }
        } else if (e->flags & hipStreamNonBlocking) {
            m->m[m->n++] = (mark){MK_STREAM, e->device, e->s, NULL, NULL};
        }
    }
    for (shared_ev *o = S.orphans; o; o = o->next) {
        o->refs++;
        m->m[m->n++] = (mark){MK_SHARED, 0, NULL, NULL, o};
    }
    S.marking++;
    return m;
}

int sp_marks_record(sp_marks *m)
{
    int refused = m->incomplete;
    hipStreamCaptureMode old = sp_relaxed_enter();
    int saved = -1, cur = -1;
    if (m->ndev > 1 && sp_real.hipGetDevice && sp_real.hipGetDevice(&saved) == hipSuccess)
        cur = saved;
    for (int i = 0; i < m->n; i++) {
        mark *k = &m->m[i];
        if (k->kind == MK_SHARED)
            continue;
        if (m->ndev > 1 && k->device != cur && sp_real.hipSetDevice &&
            sp_real.hipSetDevice(k->device) == hipSuccess)
            cur = k->device;
        if (sp_real.hipStreamQuery && sp_real.hipStreamQuery(k->s) == hipSuccess)
            continue; /* idle: nothing to wait for */
        k->ev = record_on(k->s);
        if (k->ev)
            continue;
        /* No marker (the runtime refused it, or out of events). During a
         * capture the null stream's may be refused: wait for the capture to
         * end. Otherwise wait for the stream itself, here and now: never
         * release (or return) before its work is done. */
        if (k->kind == MK_NULL && m->n_capturing > 0) {
            refused = 1;
        } else {
            hipError_t e = sp_real.hipStreamSynchronize(k->s);
            if (e != hipSuccess) {
                sp_diag(SP_RUNTIME_ERROR, NULL,
                        "no release marker could be recorded on stream %p, and "
                        "hipStreamSynchronize on it returned %d",
                        (void *)k->s, (int)e);
                refused = 1;
            }
        }
    }
    if (saved >= 0 && cur != saved)
        sp_real.hipSetDevice(saved);
    sp_relaxed_leave(old);
    sp_lock();
    S.marking--;
    sp_lock_broadcast();
    sp_unlock();
    return refused ? -1 : 0;
}

static hipEvent_t mark_event(const mark *k) { return k->kind == MK_SHARED ? k->sh->ev : k->ev; }

int sp_marks_done(sp_marks *m)
{
    int done = 1;
    hipStreamCaptureMode old = sp_relaxed_enter();
    for (int i = 0; i < m->n && done; i++) {
        mark *k = &m->m[i];
        hipEvent_t ev = mark_event(k);
        if (!ev || (k->kind == MK_SHARED && __atomic_load_n(&k->sh->done, __ATOMIC_RELAXED)))
            continue;
        if (sp_real.hipEventQuery(ev) == hipSuccess) {
            if (k->kind == MK_SHARED)
                __atomic_store_n(&k->sh->done, 1, __ATOMIC_RELAXED);
        } else {
            done = 0;
        }
    }
    sp_relaxed_leave(old);
    return done;
}

/* hipEventSynchronize on a marker failed: the wait must still happen (a
 * release, or an ordered unregister, never goes early). Poll the event; if
 * the runtime cannot answer for it either, synchronize its stream. */
static hipError_t wait_marker_otherwise(const mark *k, hipEvent_t ev)
{
    hipError_t e;
    while ((e = sp_real.hipEventQuery(ev)) == hipErrorNotReady)
        usleep(50);
    if (e == hipSuccess || k->kind == MK_SHARED)
        return e;
    /* The null stream is per device: synchronize the marker's. */
    int saved = -1;
    if (sp_real.hipGetDevice && sp_real.hipSetDevice && sp_real.hipGetDevice(&saved) == hipSuccess &&
        saved != k->device)
        sp_real.hipSetDevice(k->device);
    e = sp_real.hipStreamSynchronize(k->s);
    if (saved >= 0 && saved != k->device)
        sp_real.hipSetDevice(saved);
    return e;
}

void sp_marks_wait(sp_marks *m)
{
    hipStreamCaptureMode old = sp_relaxed_enter();
    for (int i = 0; i < m->n; i++) {
        mark *k = &m->m[i];
        hipEvent_t ev = mark_event(k);
        if (!ev || (k->kind == MK_SHARED && __atomic_load_n(&k->sh->done, __ATOMIC_RELAXED)))
            continue;
        hipError_t e = sp_real.hipEventSynchronize(ev);
        if (e != hipSuccess) {
            sp_diag(SP_RUNTIME_ERROR, NULL,
                    "hipEventSynchronize on a release marker returned %d: waiting by other means",
                    (int)e);
            e = wait_marker_otherwise(k, ev);
        }
        if (e == hipSuccess && k->kind == MK_SHARED)
            __atomic_store_n(&k->sh->done, 1, __ATOMIC_RELAXED);
    }
    sp_relaxed_leave(old);
}

int sp_marks_saw_capture(const sp_marks *m) { return m->saw_capture; }

void sp_marks_put(sp_marks *m)
{
    if (!m)
        return;
    for (int i = 0; i < m->n; i++)
        if (m->m[i].kind != MK_SHARED && m->m[i].ev)
            sp_real.hipEventDestroy(m->m[i].ev);
    sp_lock();
    for (int i = 0; i < m->n; i++) {
        shared_ev *sh = m->m[i].sh;
        if (!sh)
            continue;
        if (__atomic_load_n(&sh->done, __ATOMIC_RELAXED) && sh->orphan) {
            /* A completed tail marker covers nothing any more. */
            for (shared_ev **pp = &S.orphans; *pp; pp = &(*pp)->next)
                if (*pp == sh) {
                    *pp = sh->next;
                    break;
                }
            sh->orphan = 0;
            S.n_orphans--;
            unref(sh);
        }
        unref(sh);
    }
    sp_unlock();
    if (m->reserve)
        tls_reserve_used = 0;
    else
        sp_mem_free(m);
    flush_dead();
}

void sp_streams_fork_child(void)
{
    int ndev = S.ndev;
    memset(&S, 0, sizeof(S));
    S.ndev = ndev;
}
