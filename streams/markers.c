/*
 * markers.c - marker sets (see streams.h: sp_marks_*): a marker on every
 * null stream of every place in use and on every non-blocking stream,
 * taken under the lock, recorded outside it, waited on and put back; the
 * reserve sets for when safepin's own allocation fails.
 */
#include "streams_int.h"
#include "diag.h"
#include "lock.h"
#include "registry.h"
#include "runtime.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

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
    for (stream_ent *e = sp_st.streams; e; e = e->next)
        if (e->rt == rt && e->capturing && (e->place == place || !e->place) &&
            (!(e->flags & SP_STREAM_NON_BLOCKING) || e->foreign))
            return 1;
    return 0;
}


/* Lock NOT held. Every runtime in use that can say (only rt, if >= 0). */
void sp_st_scan_all(scanned *sc, int only)
{
    for (int rt = 0; rt < SP_RT_MAX; rt++) {
        sc->v[rt] = sc->buf[rt];
        sc->n[rt] = 0;
        if ((only < 0 || rt == only) && sp_rt(rt)->present())
            sc->n[rt] = sp_st_scan_places(rt, sc->buf[rt], &sc->v[rt]);
    }
}

void sp_st_scan_all_done(scanned *sc)
{
    for (int rt = 0; rt < SP_RT_MAX; rt++)
        sp_st_scan_done(sc->buf[rt], sc->v[rt]);
}

/* Lock held. How many null-stream marks rt's places make (at most). */
size_t sp_st_null_marks_cap(int rt, const scanned *sc)
{
    if (!sp_rt(rt)->present())
        return 0;
    size_t n = (size_t)sp_st_ordinal_count(rt) + (size_t)sc->n[rt];
    for (int i = 0; i < sp_st.nplaces; i++)
        n += sp_st.places[i].rt == rt;
    return n;
}

/* Lock held. The null-stream marks of rt's places into v. */
size_t sp_st_null_marks(int rt, const scanned *sc, mark *v)
{
    const sp_rt_ops *o = sp_rt(rt);
    if (!o->present())
        return 0;
    size_t n = 0;
    int sw = sp_st_needs_switch(rt);
    for (int d = 0; d < sp_st_ordinal_count(rt); d++)
        v[n++] = (mark){MK_NULL, rt, (void *)(intptr_t)d, o->null_stream, NULL, NULL, 0, sw};
    for (int i = 0; i < sp_st.nplaces; i++)
        if (sp_st.places[i].rt == rt)
            v[n++] = (mark){MK_NULL, rt, sp_st.places[i].place, o->null_stream, NULL, NULL,
                            null_unsafe(rt, sp_st.places[i].place), sw};
    for (int c = 0; c < sc->n[rt]; c++)
        if (!sp_st_known_place(rt, sc->v[rt][c]))
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
        sp_st_scan_all(&sc, -1);
        sp_lock();
    } else {
        sp_st_scan_all(&sc, SP_RT_MAX); /* none */
    }
    sp_marks *m;
    for (;;) {
        while (sp_st.n_unsettled > 0)
            sp_lock_wait();
        size_t cap = sp_st.n_orphans;
        for (int rt = 0; rt < SP_RT_MAX; rt++)
            cap += sp_st_null_marks_cap(rt, &sc);
        for (stream_ent *e = sp_st.streams; e; e = e->next)
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
        sp_st_scan_all_done(&sc);
        return NULL;
    }
    m->n = 0;
    m->saw_capture = 0;
    m->incomplete = 0;
    m->n_capturing = sp_st.n_capturing;
    /* The null stream of every place: it covers the blocking streams. */
    for (int rt = 0; rt < SP_RT_MAX; rt++)
        m->n += (int)sp_st_null_marks(rt, &sc, &m->m[m->n]);
    sp_st_scan_all_done(&sc);
    for (stream_ent *e = sp_st.streams; e; e = e->next) {
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
                                  sp_st_needs_switch(e->rt)};
        }
    }
    for (shared_ev *o = sp_st.orphans; o; o = o->next) {
        o->refs++;
        m->m[m->n++] = (mark){MK_SHARED, o->rt, o->place, NULL, NULL, o, 0, 0};
    }
    sp_st.marking++;
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
            sp_st_go_to(k->rt, &ps[k->rt], k->place);
        if (o->stream_query(k->s) == 0)
            continue; /* idle: nothing to wait for */
        k->ev = sp_st_record_on(k->rt, k->s);
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
    sp_st_marking_done(ps, old);
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
        sp_st_go_to_for_events(k->rt, ps, k->place);
        if (sp_rt(k->rt)->event_query(ev) == 0) {
            if (k->kind == MK_SHARED)
                __atomic_store_n(&k->sh->done, 1, __ATOMIC_RELAXED);
        } else {
            done = 0;
        }
    }
    sp_st_go_back_all(ps);
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
        sp_st_go_to(k->rt, &here, k->place);
    e = o->stream_sync(k->s);
    sp_st_go_back(k->rt, &here);
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
        sp_st_go_to_for_events(k->rt, ps, k->place);
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
    sp_st_go_back_all(ps);
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
            sp_st_go_to_for_events(m->m[i].rt, ps, m->m[i].place);
            sp_rt(m->m[i].rt)->event_destroy(m->m[i].ev);
        }
    sp_st_go_back_all(ps);
    sp_lock();
    for (int i = 0; i < m->n; i++) {
        shared_ev *sh = m->m[i].sh;
        if (!sh)
            continue;
        if (__atomic_load_n(&sh->done, __ATOMIC_RELAXED) && sh->orphan) {
            /* A completed tail marker covers nothing any more. */
            for (shared_ev **pp = &sp_st.orphans; *pp; pp = &(*pp)->next)
                if (*pp == sh) {
                    *pp = sh->next;
                    break;
                }
            sh->orphan = 0;
            sp_st.n_orphans--;
            sp_st_unref(sh);
        }
        sp_st_unref(sh);
    }
    sp_unlock();
    marks_release(m);
    sp_st_flush_dead();
}
