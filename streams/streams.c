/*
 * streams.c - the streams markers must cover, captures, destroyed streams'
 * tail markers, and marker sets (see streams.h).
 */
#include "streams.h"
#include "diag.h"
#include "lock.h"
#include "registry.h"
#include "runtime.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>


/* An event several owners wait on (pre-capture events, tail markers). */
typedef struct shared_ev {
    void *ev;
    int rt;                /* SP_RT_*: whose event */
    void *place;           /* the place it belongs to */
    int refs;
    int orphan;            /* on S.orphans (holds one ref); lock held */
    int done;              /* known complete; atomic (set without the lock) */
    struct shared_ev *next;
} shared_ev;

typedef struct stream_ent {
    void *s;
    int rt;                  /* SP_RT_* */
    unsigned flags;          /* SP_STREAM_NON_BLOCKING */
    void *place;             /* a device ordinal, or a context (runtime.h) */
    unsigned capturing : 1;  /* the runtime said so */
    unsigned foreign : 1;    /* not created through the hooks */
    unsigned retiring : 1;   /* its destroy was handed to the reaper */
    int begin_pending;       /* a capture begin is between its event and the runtime's answer */
    pthread_t capturer;      /* thread that began the capture (per-thread streams: the key) */
    shared_ev *pre;          /* recorded just before the current capture began */
    struct stream_ent *next;
} stream_ent;

typedef struct place_ent {
    int rt;
    void *place;
} place_ent;

static struct {
    stream_ent *streams;
    shared_ev *orphans;      /* tail markers of destroyed streams */
    size_t n_orphans, prune_at;
    shared_ev *dead;         /* refs 0: destroyed outside the lock */
    int ndev[SP_RT_MAX];     /* ordinal places: one null-stream marker each */
    place_ent *places;       /* handle places (contexts) seen: one null-stream marker each */
    int nplaces, places_cap;
    int n_capturing;
    int n_unsettled;         /* capture begins in progress: sets wait */
    int marking;             /* sets being recorded: begins and destroys wait */
    int n_retiring;
} S;

enum mark_kind { MK_NULL, MK_STREAM, MK_SHARED };

typedef struct mark {
    enum mark_kind kind;
    int rt;
    void *place;
    void *s;
    void *ev;                /* own event (MK_NULL, MK_STREAM), NULL: idle */
    shared_ev *sh;           /* MK_SHARED */
    int avoid;               /* MK_NULL: a blocking stream of the place captures
                                (null_stream_breaks_capture): not touched */
    int switch_place;        /* the place is made current for its calls */
} mark;

struct sp_marks {
    int reserve;             /* 1 + its index in reserve_pool, or 0: allocated */
    int n;
    int saw_capture;
    int incomplete;          /* captured stream whose earlier work has no event */
    int n_capturing;         /* streams capturing when the set was taken */
    mark m[];
};

/* ---- helpers ------------------------------------------------------------- */

/* The old mode of each runtime in 4 bits (relaxed is 2 in all), and bit
 * 16+rt set where it was exchanged. */
int sp_relaxed_enter(void)
{
    int old = 0;
    for (int rt = 0; rt < SP_RT_MAX; rt++) {
        const sp_rt_ops *o = sp_rt(rt);
        if (!o->present())
            continue;
        int mode = 2;
        o->exchange_mode(&mode);
        old |= (mode & 0xf) << (4 * rt) | 1 << (16 + rt);
    }
    return old;
}

void sp_relaxed_leave(int old)
{
    for (int rt = 0; rt < SP_RT_MAX; rt++) {
        if (!(old & 1 << (16 + rt)))
            continue;
        int mode = (old >> (4 * rt)) & 0xf;
        sp_rt(rt)->exchange_mode(&mode);
    }
}

static int is_per_thread(int rt, void *s) { return s && s == sp_rt(rt)->per_thread_stream; }

/* The calling thread's place in one runtime, saved on first change and
 * restored at the end (a program thread keeps its device and context). */
typedef struct place_state {
    int tried, saved_ok, cur_ok;
    void *saved, *cur;
} place_state;

static void go_to(int rt, place_state *ps, void *place)
{
    const sp_rt_ops *o = sp_rt(rt);
    if (!ps->tried) {
        ps->tried = 1;
        if (o->get_place(&ps->saved) == 0) {
            ps->saved_ok = ps->cur_ok = 1;
            ps->cur = ps->saved;
        }
    }
    if (ps->cur_ok && ps->cur == place)
        return;
    if (o->set_place(place) == 0) {
        ps->cur = place;
        ps->cur_ok = 1;
    }
}

static void go_back(int rt, place_state *ps)
{
    if (ps->saved_ok && (!ps->cur_ok || ps->cur != ps->saved))
        sp_rt(rt)->set_place(ps->saved);
}

/* Every runtime's place as it was (ps: one state per runtime). */
static void go_back_all(place_state *ps)
{
    for (int rt = 0; rt < SP_RT_MAX; rt++)
        go_back(rt, &ps[rt]);
}

/* Lock NOT held. The end of a pass over the streams (S.marking held off
 * begins and destroys): places and capture mode as they were. */
static void marking_done(place_state *ps, int old)
{
    go_back_all(ps);
    sp_relaxed_leave(old);
    sp_lock();
    S.marking--;
    sp_lock_broadcast();
    sp_unlock();
}

/* Events of runtimes that need it are used with their place current. */
static void go_to_for_events(int rt, place_state *ps, void *place)
{
    if (sp_rt(rt)->place_current_for_events && place)
        go_to(rt, &ps[rt], place);
}


static stream_ent **find_stream(int rt, void *s)
{
    stream_ent **pp = &S.streams;
    pthread_t self = pthread_self();
    while (*pp && ((*pp)->s != s || (*pp)->rt != rt ||
                   (is_per_thread(rt, s) && !pthread_equal((*pp)->capturer, self))))
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
    place_state ps[SP_RT_MAX];
    memset(ps, 0, sizeof(ps));
    while (d) {
        shared_ev *next = d->next;
        if (d->ev) {
            go_to_for_events(d->rt, ps, d->place);
            sp_rt(d->rt)->event_destroy(d->ev);
        }
        sp_mem_free(d);
        d = next;
    }
    go_back_all(ps);
}

/* A new event recorded on s (relaxed mode), or NULL. Lock NOT held. */
static void *record_on(int rt, void *s)
{
    void *ev = NULL;
    return sp_rt(rt)->record(s, &ev) == 0 ? ev : NULL;
}

static shared_ev *new_shared(int rt, void *place, void *ev)
{
    if (!ev)
        return NULL;
    shared_ev *e = sp_mem_calloc(1, sizeof(*e));
    if (!e) {
        sp_rt(rt)->event_destroy(ev);
        return NULL;
    }
    e->ev = ev;
    e->rt = rt;
    e->place = place;
    e->refs = 1;
    return e;
}

/* ---- devices and streams ------------------------------------------------- */

/* The places rt's runtime names as in use now (sp_rt_ops.scan_places), into buf (SP_SCAN_BUF entries)
 * or, when more, into an allocation the caller frees (*out != buf). Lock
 * NOT held; none inside a host function, where safepin calls nothing (a
 * set taken there has only what is known). Relaxed capture mode. */
#define SP_SCAN_BUF 16
static int scan_places(int rt, void **buf, void ***out)
{
    const sp_rt_ops *o = sp_rt(rt);
    *out = buf;
    if (sp_tls_in_hostfn || !o->scan_places || !o->present())
        return 0;
    int old = sp_relaxed_enter();
    int n = o->scan_places(buf, SP_SCAN_BUF);
    for (int tries = 0; n > SP_SCAN_BUF && tries < 3; tries++) {
        void **v = sp_mem_alloc((size_t)n * sizeof(*v));
        if (!v)
            break;
        int m = o->scan_places(v, n);
        if (m <= n) {
            *out = v;
            n = m;
            break;
        }
        sp_mem_free(v);
        n = m;
    }
    sp_relaxed_leave(old);
    if (*out == buf && n > SP_SCAN_BUF)
        n = SP_SCAN_BUF; /* out of memory: the first ones */
    return n < 0 ? 0 : n;
}

static void scan_done(void **buf, void **v)
{
    if (v != buf)
        sp_mem_free(v);
}

/* Lock held. 1 if place is a known place of rt (markers cover it anyway). */
static int known_place(int rt, void *place)
{
    for (int i = 0; i < S.nplaces; i++)
        if (S.places[i].rt == rt && S.places[i].place == place)
            return 1;
    return 0;
}

/* Lock held. How many ordinal places rt has now (0: handle places, or
 * not in use). */
static int ordinal_count(int rt)
{
    const sp_rt_ops *o = sp_rt(rt);
    if (!o->ordinal_places || !o->present())
        return 0;
    return S.ndev[rt] > 0 ? S.ndev[rt] : 1;
}

/* Lock held. 1 if rt's markers are recorded with their place current. */
static int needs_switch(int rt)
{
    return sp_rt(rt)->place_current_for_events || S.ndev[rt] > 1;
}

void sp_streams_init_places(int rt)
{
    const sp_rt_ops *o = sp_rt(rt);
    if (!o->ordinal_places)
        return;
    int n = o->device_count ? o->device_count() : 1;
    sp_lock();
    S.ndev[rt] = n < 1 ? 1 : n;
    sp_unlock();
}

int sp_streams_add_place(int rt, void *place)
{
    if (sp_rt(rt)->ordinal_places || !place || known_place(rt, place))
        return 0;
    if (S.nplaces == S.places_cap) {
        int cap = S.places_cap ? 2 * S.places_cap : 8;
        place_ent *v = sp_mem_alloc((size_t)cap * sizeof(*v));
        if (!v)
            return -1;
        if (S.nplaces)
            memcpy(v, S.places, (size_t)S.nplaces * sizeof(*v));
        sp_mem_free(S.places);
        S.places = v;
        S.places_cap = cap;
    }
    S.places[S.nplaces++] = (place_ent){rt, place};
    return 0;
}

int sp_streams_add_rt(int rt, void *s, unsigned flags, void *place)
{
    sp_streams_add_place(rt, place);
    stream_ent *e = sp_mem_calloc(1, sizeof(*e));
    if (!e) {
        const sp_rt_ops *o = sp_rt(rt);
        sp_log(SP_LOG_ERROR, "runtime-error",
               "out of memory: stream %p cannot be tracked; its create fails with %s", s,
               o->code_name ? o->code_name(o->err_out_of_memory) : "out of memory");
        return -1;
    }
    e->s = s;
    e->rt = rt;
    e->flags = flags;
    e->place = place;
    e->next = S.streams;
    S.streams = e;
    return 0;
}

int sp_streams_is_capturing_rt(int rt, void *s)
{
    stream_ent *e = *find_stream(rt, s);
    return e && e->capturing;
}

int sp_streams_any_captures(void)
{
    /* (n_capturing counts the entries marked capturing: no list walk on
     * every ordered unregister.) */
    return S.n_capturing > 0 || S.n_unsettled > 0; /* or a capture begin in progress */
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
    int old = sp_relaxed_enter();
    place_state ps[SP_RT_MAX];
    memset(ps, 0, sizeof(ps));
    for (i = 0; i < n; i++) {
        go_to_for_events(v[i]->rt, ps, v[i]->place);
        if (v[i]->ev && sp_rt(v[i]->rt)->event_query(v[i]->ev) == 0)
            __atomic_store_n(&v[i]->done, 1, __ATOMIC_RELAXED);
    }
    go_back_all(ps);
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

int sp_streams_destroy_rt(int rt, void *s)
{
    if (!s || is_per_thread(rt, s) || s == sp_rt(rt)->null_stream)
        return 0;
    sp_lock();
    stream_ent *e = *find_stream(rt, s);
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
    void *place = e->place;
    sp_unlock();

    /* The work queued so far stays covered by a tail marker (a capturing
     * stream's captured work never runs: its pre-capture event covers it). */
    void *tail = NULL;
    if (!capturing) {
        int old = sp_relaxed_enter();
        tail = record_on(rt, s);
        sp_relaxed_leave(old);
    }
    shared_ev *sh = new_shared(rt, place, tail);

    sp_lock();
    while (S.marking)
        sp_lock_wait();
    stream_ent **pp = find_stream(rt, s);
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
        void *s = NULL;
        int rt = 0;
        for (stream_ent *e = S.streams; e; e = e->next)
            if (e->retiring) {
                s = e->s;
                rt = e->rt;
                break;
            }
        sp_unlock();
        if (!s)
            break;
        sp_streams_destroy_rt(rt, s);
        sp_rt(rt)->stream_destroy(s);
    }
    flush_dead();
}

/* ---- captures -------------------------------------------------------------- */

/* What the runtime says of s: 1 capturing (active or invalidated), 0 not,
 * -1 unknown (no query possible). Lock NOT held. */
static int runtime_capturing(int rt, void *s)
{
    if (sp_tls_in_hostfn)
        return -1;
    int capturing = 0;
    int old = sp_relaxed_enter();
    int e = sp_rt(rt)->stream_capturing(s, &capturing);
    sp_relaxed_leave(old);
    return e == 0 ? capturing : -1;
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

int sp_streams_begin_capture_rt(int rt, void *s, sp_capture_call call, void *arg)
{
    void *here = NULL;
    if (sp_rt(rt)->get_place(&here) != 0)
        here = NULL;
    sp_lock();
    while (S.marking)
        sp_lock_wait();
    stream_ent **pp = find_stream(rt, s);
    stream_ent *e = *pp;
    if (!e) {
        e = sp_mem_calloc(1, sizeof(*e));
        if (e) {
            e->s = s;
            e->rt = rt;
            e->place = here;
            e->foreign = 1;
            /* Unknown flags: marked as if non-blocking (harmless if not);
             * a per-thread stream is blocking and belongs to this thread. */
            e->flags = is_per_thread(rt, s) ? 0 : SP_STREAM_NON_BLOCKING;
            e->capturer = pthread_self();
            e->next = S.streams;
            S.streams = e;
        }
    }
    if (!e) {
        sp_unlock();
        return call(s, arg);
    }
    int already = e->capturing;
    e->begin_pending++;
    S.n_unsettled++;
    sp_unlock();

    /* The work enqueued before the capture still runs: an event covers it. */
    shared_ev *pre = NULL;
    if (!already && !sp_tls_in_hostfn) {
        int old = sp_relaxed_enter();
        pre = new_shared(rt, here, record_on(rt, s));
        sp_relaxed_leave(old);
    }
    int r = call(s, arg);
    int capturing = r == 0 ? 1 : runtime_capturing(rt, s);
    if (capturing < 0)
        capturing = already;

    sp_lock();
    pp = find_stream(rt, s);
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

int sp_streams_end_capture_rt(int rt, void *s, sp_capture_call call, void *arg)
{
    int r = call(s, arg);
    int capturing = runtime_capturing(rt, s);
    if (capturing < 0) /* ended, or invalidated and ended */
        capturing = !(r == 0 || r == sp_rt(rt)->err_capture_invalidated);
    sp_lock();
    stream_ent **pp = find_stream(rt, s);
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

/* Marker sets for when safepin's own allocation fails: a pool of
 * SP_MARKS_RESERVE_SETS, each for up to SP_MARKS_RESERVE streams, claimed
 * one at a time. Without them, out of memory would mean a release, or an
 * ordered unregister's visibility, with nothing to wait on. They live in
 * .bss, not in thread-local storage: static TLS is carved out of every
 * thread's stack, the program's smallest ones too (DESIGN G12); its pages
 * are touched only when used. A thread holds at most one set at a time
 * (taken and put back in one call: sp_wait_prior_work, the reaper's
 * wait_prior_work), so when every set is in use, sp_marks_take waits for
 * one: their holders wait only for the device. */
#define SP_MARKS_RESERVE 64
#define SP_MARKS_RESERVE_SETS 32
static union {
    sp_marks m;
    unsigned char bytes[sizeof(sp_marks) + SP_MARKS_RESERVE * sizeof(mark)];
} reserve_pool[SP_MARKS_RESERVE_SETS];
static atomic_uint reserve_used; /* bit i: reserve_pool[i] is taken */

/* NULL: out of memory past what a reserve set holds, or (*busy) every
 * reserve set in use. */
static sp_marks *marks_alloc(size_t cap, int *busy)
{
    *busy = 0;
    sp_marks *m = sp_mem_alloc(sizeof(*m) + cap * sizeof(mark));
    if (m) {
        m->reserve = 0;
        return m;
    }
    if (cap > SP_MARKS_RESERVE)
        return NULL;
    unsigned used = atomic_load(&reserve_used);
    for (;;) {
        unsigned freebits = ~used & (unsigned)((1ull << SP_MARKS_RESERVE_SETS) - 1);
        if (!freebits) {
            *busy = 1;
            return NULL;
        }
        int i = __builtin_ctz(freebits);
        if (atomic_compare_exchange_weak(&reserve_used, &used, used | (1u << i))) {
            m = &reserve_pool[i].m;
            m->reserve = 1 + i;
            return m;
        }
    }
}

static void marks_release(sp_marks *m)
{
    if (m->reserve)
        atomic_fetch_and(&reserve_used, ~(1u << (m->reserve - 1)));
    else
        sp_mem_free(m);
}

/* Lock held. 1 if the null stream of place must not be touched
 * (null_stream_breaks_capture): a blocking stream of that place (or one of
 * unknown flags) captures. On the H200 a marker recorded on CUDA's legacy
 * stream then answers 906 *and* invalidates a global capture, relaxed mode
 * or not; even a query is not risked. */
static int null_unsafe(int rt, void *place)
{
    if (!sp_rt(rt)->null_stream_breaks_capture)
        return 0;
    for (stream_ent *e = S.streams; e; e = e->next)
        if (e->rt == rt && e->capturing && (e->place == place || !e->place) &&
            (!(e->flags & SP_STREAM_NON_BLOCKING) || e->foreign))
            return 1;
    return 0;
}

/* The places the runtimes scanned (scan_places), per runtime. */
typedef struct scanned {
    void *buf[SP_RT_MAX][SP_SCAN_BUF];
    void **v[SP_RT_MAX];
    int n[SP_RT_MAX];
} scanned;

/* Lock NOT held. Every runtime in use that can say (only rt, if >= 0). */
static void scan_all(scanned *sc, int only)
{
    for (int rt = 0; rt < SP_RT_MAX; rt++) {
        sc->v[rt] = sc->buf[rt];
        sc->n[rt] = 0;
        if ((only < 0 || rt == only) && sp_rt(rt)->present())
            sc->n[rt] = scan_places(rt, sc->buf[rt], &sc->v[rt]);
    }
}

static void scan_all_done(scanned *sc)
{
    for (int rt = 0; rt < SP_RT_MAX; rt++)
        scan_done(sc->buf[rt], sc->v[rt]);
}

/* Lock held. How many null-stream marks rt's places make (at most). */
static size_t null_marks_cap(int rt, const scanned *sc)
{
    if (!sp_rt(rt)->present())
        return 0;
    size_t n = (size_t)ordinal_count(rt) + (size_t)sc->n[rt];
    for (int i = 0; i < S.nplaces; i++)
        n += S.places[i].rt == rt;
    return n;
}

/* Lock held. The null-stream marks of rt's places into v. */
static size_t null_marks(int rt, const scanned *sc, mark *v)
{
    const sp_rt_ops *o = sp_rt(rt);
    if (!o->present())
        return 0;
    size_t n = 0;
    int sw = needs_switch(rt);
    for (int d = 0; d < ordinal_count(rt); d++)
        v[n++] = (mark){MK_NULL, rt, (void *)(intptr_t)d, o->null_stream, NULL, NULL, 0, sw};
    for (int i = 0; i < S.nplaces; i++)
        if (S.places[i].rt == rt)
            v[n++] = (mark){MK_NULL, rt, S.places[i].place, o->null_stream, NULL, NULL,
                            null_unsafe(rt, S.places[i].place), sw};
    for (int c = 0; c < sc->n[rt]; c++)
        if (!known_place(rt, sc->v[rt][c]))
            v[n++] = (mark){MK_NULL, rt, sc->v[rt][c], o->null_stream, NULL, NULL,
                            null_unsafe(rt, sc->v[rt][c]), sw};
    return n;
}

sp_marks *sp_marks_take(void)
{
    /* The places the runtimes name as in use now, asked without the lock. */
    scanned sc;
    int any = 0;
    for (int rt = 0; rt < SP_RT_MAX; rt++)
        any |= sp_rt(rt)->scan_places && sp_rt(rt)->present();
    if (any && !sp_tls_in_hostfn) {
        sp_unlock();
        scan_all(&sc, -1);
        sp_lock();
    } else {
        scan_all(&sc, SP_RT_MAX); /* none */
    }
    sp_marks *m;
    for (;;) {
        while (S.n_unsettled > 0)
            sp_lock_wait();
        size_t cap = S.n_orphans;
        for (int rt = 0; rt < SP_RT_MAX; rt++)
            cap += null_marks_cap(rt, &sc);
        for (stream_ent *e = S.streams; e; e = e->next)
            cap++;
        int busy;
        m = marks_alloc(cap, &busy);
        if (m || !busy || sp_tls_in_hostfn)
            break;
        /* Out of memory and every reserve set in use: one comes back when
         * its holder's device work is done. Never return without one (the
         * caller would not wait for that work); but never wait in a host
         * function, whose stream the holders' work may be behind. */
        sp_lock_timedwait_ns(sp_now_ns() + 1000000ull);
    }
    if (!m) {
        scan_all_done(&sc);
        return NULL;
    }
    m->n = 0;
    m->saw_capture = 0;
    m->incomplete = 0;
    m->n_capturing = S.n_capturing;
    /* The null stream of every place: it covers the blocking streams. */
    for (int rt = 0; rt < SP_RT_MAX; rt++)
        m->n += (int)null_marks(rt, &sc, &m->m[m->n]);
    scan_all_done(&sc);
    for (stream_ent *e = S.streams; e; e = e->next) {
        if (e->capturing) {
            m->saw_capture = 1;
            /* Its pre-capture work (blocking ones: the null marker covers it). */
            if (!(e->flags & SP_STREAM_NON_BLOCKING))
                continue;
            if (e->pre) {
                e->pre->refs++;
                m->m[m->n++] = (mark){MK_SHARED, e->rt, e->place, NULL, NULL, e->pre, 0, 0};
            } else {
                m->incomplete = 1;
            }
        } else if (e->flags & SP_STREAM_NON_BLOCKING) {
            m->m[m->n++] = (mark){MK_STREAM, e->rt, e->place, e->s, NULL, NULL, 0,
                                  needs_switch(e->rt)};
        }
    }
    for (shared_ev *o = S.orphans; o; o = o->next) {
        o->refs++;
        m->m[m->n++] = (mark){MK_SHARED, o->rt, o->place, NULL, NULL, o, 0, 0};
    }
    S.marking++;
    return m;
}

int sp_marks_record(sp_marks *m)
{
    int refused = m->incomplete;
    int old = sp_relaxed_enter();
    place_state ps[SP_RT_MAX];
    memset(ps, 0, sizeof(ps));
    for (int i = 0; i < m->n; i++) {
        mark *k = &m->m[i];
        if (k->kind == MK_SHARED)
            continue;
        const sp_rt_ops *o = sp_rt(k->rt);
        if (k->avoid) {
            refused = 1; /* wait for the capture to end */
            continue;
        }
        /* One device needs no switching; a runtime whose events need their
         * place current gets it always (the reaper thread has none). */
        if (k->switch_place)
            go_to(k->rt, &ps[k->rt], k->place);
        if (o->stream_query(k->s) == 0)
            continue; /* idle: nothing to wait for */
        k->ev = record_on(k->rt, k->s);
        if (k->ev)
            continue;
        /* No marker (the runtime refused it, or out of events). During a
         * capture the null stream's may be refused: wait for the capture to
         * end. Otherwise wait for the stream itself, here and now: never
         * release (or return) before its work is done. */
        if (k->kind == MK_NULL && m->n_capturing > 0) {
            refused = 1;
        } else {
            int e = o->stream_sync(k->s);
            if (e != 0 && e != o->err_gone) { /* gone: nothing left to wait for */
                sp_diag(SP_RUNTIME_ERROR, NULL,
                        "no release marker could be recorded on %s stream %p, and synchronizing "
                        "it returned %d",
                        o->name, k->s, e);
                refused = 1;
            }
        }
    }
    marking_done(ps, old);
    return refused ? -1 : 0;
}

static void *mark_event(const mark *k) { return k->kind == MK_SHARED ? k->sh->ev : k->ev; }

int sp_marks_done(sp_marks *m)
{
    int done = 1;
    int old = sp_relaxed_enter();
    place_state ps[SP_RT_MAX];
    memset(ps, 0, sizeof(ps));
    for (int i = 0; i < m->n && done; i++) {
        mark *k = &m->m[i];
        void *ev = mark_event(k);
        if (!ev || (k->kind == MK_SHARED && __atomic_load_n(&k->sh->done, __ATOMIC_RELAXED)))
            continue;
        go_to_for_events(k->rt, ps, k->place);
        if (sp_rt(k->rt)->event_query(ev) == 0) {
            if (k->kind == MK_SHARED)
                __atomic_store_n(&k->sh->done, 1, __ATOMIC_RELAXED);
        } else {
            done = 0;
        }
    }
    go_back_all(ps);
    sp_relaxed_leave(old);
    return done;
}

/* The marker's synchronize failed: the wait must still happen (a release,
 * or an ordered unregister, never goes early). Poll the event; if the
 * runtime cannot answer for it either, synchronize the marker's stream in
 * its place (the null stream is per place). */
static int wait_marker_otherwise(const mark *k, void *ev)
{
    const sp_rt_ops *o = sp_rt(k->rt);
    int e;
    while ((e = o->event_query(ev)) == o->err_not_ready)
        usleep(50);
    if (e == 0 || k->kind == MK_SHARED)
        return e;
    /* (Where events need their place, it is current already: sp_marks_wait.) */
    place_state here;
    memset(&here, 0, sizeof(here));
    if (k->place && !o->place_current_for_events)
        go_to(k->rt, &here, k->place);
    e = o->stream_sync(k->s);
    go_back(k->rt, &here);
    return e;
}

void sp_marks_wait(sp_marks *m)
{
    int old = sp_relaxed_enter();
    place_state ps[SP_RT_MAX];
    memset(ps, 0, sizeof(ps));
    for (int i = 0; i < m->n; i++) {
        mark *k = &m->m[i];
        void *ev = mark_event(k);
        if (!ev || (k->kind == MK_SHARED && __atomic_load_n(&k->sh->done, __ATOMIC_RELAXED)))
            continue;
        go_to_for_events(k->rt, ps, k->place);
        int e = sp_rt(k->rt)->event_sync(ev);
        if (e != 0 && e != sp_rt(k->rt)->err_gone) {
            sp_diag(SP_RUNTIME_ERROR, NULL,
                    "synchronizing a %s release marker returned %d: waiting by other means",
                    sp_rt(k->rt)->name, e);
            e = wait_marker_otherwise(k, ev);
        }
        if (e == 0 && k->kind == MK_SHARED)
            __atomic_store_n(&k->sh->done, 1, __ATOMIC_RELAXED);
    }
    go_back_all(ps);
    sp_relaxed_leave(old);
}

int sp_marks_saw_capture(const sp_marks *m) { return m->saw_capture; }

void sp_marks_put(sp_marks *m)
{
    if (!m)
        return;
    place_state ps[SP_RT_MAX];
    memset(ps, 0, sizeof(ps));
    for (int i = 0; i < m->n; i++)
        if (m->m[i].kind != MK_SHARED && m->m[i].ev) {
            go_to_for_events(m->m[i].rt, ps, m->m[i].place);
            sp_rt(m->m[i].rt)->event_destroy(m->m[i].ev);
        }
    go_back_all(ps);
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
    marks_release(m);
    flush_dead();
}

void sp_streams_fork_child(void)
{
    int ndev[SP_RT_MAX];
    memcpy(ndev, S.ndev, sizeof(ndev));
    place_ent *places = S.places;
    int nplaces = S.nplaces, places_cap = S.places_cap;
    memset(&S, 0, sizeof(S));
    memcpy(S.ndev, ndev, sizeof(ndev));
    /* The child's contexts are its own business; the list stays (a marker
     * on a context the child cannot use fails and is waited out). */
    S.places = places;
    S.nplaces = nplaces;
    S.places_cap = places_cap;
}

/* ---- places that end, and the device's idleness (reaper/hold.c) ----------- */

void sp_streams_drop_place(int rt, void *place)
{
    if (sp_rt(rt)->ordinal_places)
        return;
    for (int i = 0; i < S.nplaces; i++)
        if (S.places[i].rt == rt && S.places[i].place == place) {
            S.places[i] = S.places[--S.nplaces];
            break;
        }
    /* Its streams and events died with it: forgotten, never called. */
    for (stream_ent **pp = &S.streams; *pp;) {
        if ((*pp)->rt == rt && (*pp)->place == place) {
            if ((*pp)->pre)
                (*pp)->pre->ev = NULL;
            drop_entry(pp);
        } else {
            pp = &(*pp)->next;
        }
    }
    for (shared_ev **pp = &S.orphans; *pp;) {
        shared_ev *o = *pp;
        if (o->rt == rt && o->place == place) {
            *pp = o->next;
            o->ev = NULL;
            o->orphan = 0;
            __atomic_store_n(&o->done, 1, __ATOMIC_RELAXED);
            S.n_orphans--;
            unref(o);
        } else {
            pp = &o->next;
        }
    }
    sp_lock_broadcast();
}

/* capture_busy: a capturing stream of rt makes it "not idle" (its work
 * before the capture began is not asked for here), not skipped. */
static int streams_idle(int rt, int capture_busy)
{
    const sp_rt_ops *o = sp_rt(rt);
    if (!o->present())
        return 1;
    scanned sc;
    scan_all(&sc, rt);
    sp_lock();
    /* A capture begin in progress has not marked its stream capturing yet:
     * a query of that stream (or of the null stream behind a blocking one)
     * would invalidate the capture it just began (as sp_marks_take). */
    while (S.n_unsettled > 0)
        sp_lock_wait();
    size_t cap = null_marks_cap(rt, &sc) + S.n_orphans;
    for (stream_ent *e = S.streams; e; e = e->next)
        cap++;
    mark *v = sp_mem_alloc((cap ? cap : 1) * sizeof(*v));
    if (!v) {
        sp_unlock();
        scan_all_done(&sc);
        return 0;
    }
    size_t n = null_marks(rt, &sc, v);
    /* Every stream, blocking ones too (a query of the null stream does not
     * say whether a blocking stream still runs), one whose destroy a host
     * function handed to the reaper (not destroyed while this marks:
     * sp_streams_destroy_rt waits), and the tail marker of each destroyed
     * stream whose work may still run. */
    int busy = 0;
    for (stream_ent *e = S.streams; e && n < cap; e = e->next) {
        if (e->rt != rt)
            continue;
        if (!e->capturing)
            v[n++] = (mark){MK_STREAM, rt, e->place, e->s, NULL, NULL, 0, needs_switch(rt)};
        else if (capture_busy)
            busy = 1;
    }
    for (shared_ev *t = S.orphans; t && n < cap; t = t->next)
        if (t->rt == rt && t->ev && !__atomic_load_n(&t->done, __ATOMIC_RELAXED)) {
            t->refs++;
            v[n++] = (mark){MK_SHARED, rt, t->place, NULL, NULL, t, 0, 0};
        }
    S.marking++;
    sp_unlock();
    scan_all_done(&sc);
    int idle = !busy;
    int old = sp_relaxed_enter();
    place_state ps[SP_RT_MAX];
    memset(ps, 0, sizeof(ps));
    for (size_t i = 0; i < n && idle; i++) {
        if (v[i].avoid) {
            idle = 0; /* a capture is open there: not idle, not asked */
            break;
        }
        if (v[i].kind == MK_SHARED) {
            go_to_for_events(rt, ps, v[i].place);
            if (o->event_query(v[i].sh->ev) == 0)
                __atomic_store_n(&v[i].sh->done, 1, __ATOMIC_RELAXED);
            else
                idle = 0;
            continue;
        }
        if (v[i].switch_place)
            go_to(rt, &ps[rt], v[i].place);
        if (o->stream_query(v[i].s) != 0)
            idle = 0;
    }
    go_back_all(ps);
    sp_relaxed_leave(old);
    sp_lock();
    for (size_t i = 0; i < n; i++)
        if (v[i].kind == MK_SHARED)
            unref(v[i].sh);
    S.marking--;
    sp_lock_broadcast();
    sp_unlock();
    sp_mem_free(v);
    flush_dead();
    return idle;
}

int sp_streams_idle(int rt) { return streams_idle(rt, 0); }

int sp_streams_quiet(int rt) { return streams_idle(rt, 1); }

int sp_streams_one_device(int rt)
{
    /* (Set once at start-up: read without the lock.) */
    return sp_rt(rt)->ordinal_places && __atomic_load_n(&S.ndev[rt], __ATOMIC_RELAXED) == 1;
}
