/*
 * streams.c - the streams and places markers must cover, destroyed
 * streams' tail markers, places that end and the device's idleness (see
 * streams.h); captures are in captures.c, marker sets in markers.c.
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

struct streams_state sp_st;

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

int sp_st_is_per_thread(int rt, void *s) { return s && s == sp_rt(rt)->per_thread_stream; }


void sp_st_go_to(int rt, place_state *ps, void *place)
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

void sp_st_go_back(int rt, place_state *ps)
{
    if (ps->saved_ok && (!ps->cur_ok || ps->cur != ps->saved))
        sp_rt(rt)->set_place(ps->saved);
}

/* Every runtime's place as it was (ps: one state per runtime). */
void sp_st_go_back_all(place_state *ps)
{
    for (int rt = 0; rt < SP_RT_MAX; rt++)
        sp_st_go_back(rt, &ps[rt]);
}

/* Lock NOT held. The end of a pass over the streams (sp_st.marking held off
 * begins and destroys): places and capture mode as they were. */
void sp_st_marking_done(place_state *ps, int old)
{
    sp_st_go_back_all(ps);
    sp_relaxed_leave(old);
    sp_lock();
    sp_st.marking--;
    sp_lock_broadcast();
    sp_unlock();
}

/* Events of runtimes that need it are used with their place current. */
void sp_st_go_to_for_events(int rt, place_state *ps, void *place)
{
    if (sp_rt(rt)->place_current_for_events && place)
        sp_st_go_to(rt, &ps[rt], place);
}


stream_ent **sp_st_find_stream(int rt, void *s)
{
    stream_ent **pp = &sp_st.streams;
    pthread_t self = pthread_self();
    while (*pp && ((*pp)->s != s || (*pp)->rt != rt ||
                   (sp_st_is_per_thread(rt, s) && !pthread_equal((*pp)->capturer, self))))
        pp = &(*pp)->next;
    return pp;
}

/* Lock held. */
void sp_st_unref(shared_ev *e)
{
    if (e && --e->refs == 0) {
        e->next = sp_st.dead;
        /* atomic: sp_st_flush_dead peeks at it without the lock */
        __atomic_store_n(&sp_st.dead, e, __ATOMIC_RELAXED);
    }
}

/* Lock NOT held; never inside a host function. Destroys dead events. */
void sp_st_flush_dead(void)
{
    if (sp_tls_in_hostfn || !__atomic_load_n(&sp_st.dead, __ATOMIC_RELAXED))
        return;
    sp_lock();
    shared_ev *d = sp_st.dead;
    __atomic_store_n(&sp_st.dead, NULL, __ATOMIC_RELAXED);
    sp_unlock();
    place_state ps[SP_RT_MAX];
    memset(ps, 0, sizeof(ps));
    while (d) {
        shared_ev *next = d->next;
        if (d->ev) {
            sp_st_go_to_for_events(d->rt, ps, d->place);
            sp_rt(d->rt)->event_destroy(d->ev);
        }
        sp_mem_free(d);
        d = next;
    }
    sp_st_go_back_all(ps);
}

/* A new event recorded on s (relaxed mode), or NULL. Lock NOT held. */
void *sp_st_record_on(int rt, void *s)
{
    void *ev = NULL;
    return sp_rt(rt)->record(s, &ev) == 0 ? ev : NULL;
}

shared_ev *sp_st_new_shared(int rt, void *place, void *ev)
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
int sp_st_scan_places(int rt, void **buf, void ***out)
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

void sp_st_scan_done(void **buf, void **v)
{
    if (v != buf)
        sp_mem_free(v);
}

/* Lock held. 1 if place is a known place of rt (markers cover it anyway). */
int sp_st_known_place(int rt, void *place)
{
    for (int i = 0; i < sp_st.nplaces; i++)
        if (sp_st.places[i].rt == rt && sp_st.places[i].place == place)
            return 1;
    return 0;
}

/* Lock held. How many ordinal places rt has now (0: handle places, or
 * not in use). */
int sp_st_ordinal_count(int rt)
{
    const sp_rt_ops *o = sp_rt(rt);
    if (!o->ordinal_places || !o->present())
        return 0;
    return sp_st.ndev[rt] > 0 ? sp_st.ndev[rt] : 1;
}

/* Lock held. 1 if rt's markers are recorded with their place current. */
int sp_st_needs_switch(int rt)
{
    return sp_rt(rt)->place_current_for_events || sp_st.ndev[rt] > 1;
}

void sp_streams_init_places(int rt)
{
    const sp_rt_ops *o = sp_rt(rt);
    if (!o->ordinal_places)
        return;
    int n = o->device_count ? o->device_count() : 1;
    sp_lock();
    sp_st.ndev[rt] = n < 1 ? 1 : n;
    sp_unlock();
}

int sp_streams_add_place(int rt, void *place)
{
    if (sp_rt(rt)->ordinal_places || !place || sp_st_known_place(rt, place))
        return 0;
    if (sp_st.nplaces == sp_st.places_cap) {
        int cap = sp_st.places_cap ? 2 * sp_st.places_cap : 8;
        place_ent *v = sp_mem_alloc((size_t)cap * sizeof(*v));
        if (!v)
            return -1;
        if (sp_st.nplaces)
            memcpy(v, sp_st.places, (size_t)sp_st.nplaces * sizeof(*v));
        sp_mem_free(sp_st.places);
        sp_st.places = v;
        sp_st.places_cap = cap;
    }
    sp_st.places[sp_st.nplaces++] = (place_ent){rt, place};
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
    e->next = sp_st.streams;
    sp_st.streams = e;
    return 0;
}

int sp_streams_is_capturing_rt(int rt, void *s)
{
    stream_ent *e = *sp_st_find_stream(rt, s);
    return e && e->capturing;
}

int sp_streams_any_captures(void)
{
    /* (n_capturing counts the entries marked capturing: no list walk on
     * every ordered unregister.) */
    return sp_st.n_capturing > 0 || sp_st.n_unsettled > 0; /* or a capture begin in progress */
}

int sp_streams_thread_captures(void)
{
    pthread_t self = pthread_self();
    for (stream_ent *e = sp_st.streams; e; e = e->next)
        if (e->capturing && pthread_equal(e->capturer, self))
            return 1;
    return 0;
}

/* Lock held: unlink and free e, releasing its pre-capture event. */
void sp_st_drop_entry(stream_ent **pp)
{
    stream_ent *e = *pp;
    *pp = e->next;
    if (e->capturing)
        sp_st.n_capturing--;
    if (e->retiring)
        sp_st.n_retiring--;
    sp_st_unref(e->pre);
    sp_mem_free(e);
    sp_lock_broadcast();
}

/* Lock held, then released and taken again: query the orphans and drop the
 * completed ones, when there are twice as many as after the last pass. */
static void prune_orphans(void)
{
    if (sp_st.n_orphans < sp_st.prune_at || sp_st.n_orphans < 64)
        return;
    size_t n = sp_st.n_orphans;
    shared_ev **v = sp_mem_alloc(n * sizeof(*v));
    if (!v)
        return;
    size_t i = 0;
    for (shared_ev *o = sp_st.orphans; o && i < n; o = o->next) {
        o->refs++;
        v[i++] = o;
    }
    n = i;
    sp_unlock();
    int old = sp_relaxed_enter();
    place_state ps[SP_RT_MAX];
    memset(ps, 0, sizeof(ps));
    for (i = 0; i < n; i++) {
        sp_st_go_to_for_events(v[i]->rt, ps, v[i]->place);
        if (v[i]->ev && sp_rt(v[i]->rt)->event_query(v[i]->ev) == 0)
            __atomic_store_n(&v[i]->done, 1, __ATOMIC_RELAXED);
    }
    sp_st_go_back_all(ps);
    sp_relaxed_leave(old);
    sp_lock();
    for (shared_ev **pp = &sp_st.orphans; *pp;) {
        shared_ev *o = *pp;
        if (__atomic_load_n(&o->done, __ATOMIC_RELAXED)) {
            *pp = o->next;
            o->orphan = 0;
            sp_st.n_orphans--;
            sp_st_unref(o);
        } else {
            pp = &o->next;
        }
    }
    for (i = 0; i < n; i++)
        sp_st_unref(v[i]);
    sp_mem_free(v);
    sp_st.prune_at = 2 * sp_st.n_orphans;
}

int sp_streams_destroy_rt(int rt, void *s)
{
    if (!s || sp_st_is_per_thread(rt, s) || s == sp_rt(rt)->null_stream)
        return 0;
    sp_lock();
    stream_ent *e = *sp_st_find_stream(rt, s);
    if (!e) {
        sp_unlock();
        return 0;
    }
    if (sp_tls_in_hostfn) {
        /* No runtime call here: the reaper records the tail and destroys. */
        int handed = !e->retiring;
        if (handed) {
            e->retiring = 1;
            sp_st.n_retiring++;
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
        tail = sp_st_record_on(rt, s);
        sp_relaxed_leave(old);
    }
    shared_ev *sh = sp_st_new_shared(rt, place, tail);

    sp_lock();
    while (sp_st.marking)
        sp_lock_wait();
    stream_ent **pp = sp_st_find_stream(rt, s);
    if (*pp) {
        stream_ent *cur = *pp;
        if (cur->capturing && !sh) {
            sh = cur->pre;
            cur->pre = NULL;
        }
        sp_st_drop_entry(pp);
    }
    if (sh) {
        sh->orphan = 1;
        sh->next = sp_st.orphans;
        sp_st.orphans = sh;
        sp_st.n_orphans++;
    }
    prune_orphans();
    sp_unlock();
    sp_st_flush_dead();
    return 0;
}

int sp_streams_has_work(void) { return sp_st.n_retiring > 0 || sp_st.dead != NULL; }

void sp_streams_sizes(size_t *streams, size_t *orphans)
{
    size_t n = 0;
    for (stream_ent *e = sp_st.streams; e; e = e->next)
        n++;
    *streams = n;
    *orphans = sp_st.n_orphans;
}

void sp_streams_service(void)
{
    for (;;) {
        sp_lock();
        void *s = NULL;
        int rt = 0;
        for (stream_ent *e = sp_st.streams; e; e = e->next)
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
    sp_st_flush_dead();
}

void sp_streams_fork_child(void)
{
    int ndev[SP_RT_MAX];
    memcpy(ndev, sp_st.ndev, sizeof(ndev));
    place_ent *places = sp_st.places;
    int nplaces = sp_st.nplaces, places_cap = sp_st.places_cap;
    memset(&sp_st, 0, sizeof(sp_st));
    memcpy(sp_st.ndev, ndev, sizeof(ndev));
    /* The child's contexts are its own business; the list stays (a marker
     * on a context the child cannot use fails and is waited out). */
    sp_st.places = places;
    sp_st.nplaces = nplaces;
    sp_st.places_cap = places_cap;
}

/* ---- places that end, and the device's idleness (reaper/hold.c) ----------- */

void sp_streams_drop_place(int rt, void *place)
{
    if (sp_rt(rt)->ordinal_places)
        return;
    for (int i = 0; i < sp_st.nplaces; i++)
        if (sp_st.places[i].rt == rt && sp_st.places[i].place == place) {
            sp_st.places[i] = sp_st.places[--sp_st.nplaces];
            break;
        }
    /* Its streams and events died with it: forgotten, never called. */
    for (stream_ent **pp = &sp_st.streams; *pp;) {
        if ((*pp)->rt == rt && (*pp)->place == place) {
            if ((*pp)->pre)
                (*pp)->pre->ev = NULL;
            sp_st_drop_entry(pp);
        } else {
            pp = &(*pp)->next;
        }
    }
    for (shared_ev **pp = &sp_st.orphans; *pp;) {
        shared_ev *o = *pp;
        if (o->rt == rt && o->place == place) {
            *pp = o->next;
            o->ev = NULL;
            o->orphan = 0;
            __atomic_store_n(&o->done, 1, __ATOMIC_RELAXED);
            sp_st.n_orphans--;
            sp_st_unref(o);
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
    sp_st_scan_all(&sc, rt);
    sp_lock();
    /* A capture begin in progress has not marked its stream capturing yet:
     * a query of that stream (or of the null stream behind a blocking one)
     * would invalidate the capture it just began (as sp_marks_take). */
    while (sp_st.n_unsettled > 0)
        sp_lock_wait();
    size_t cap = sp_st_null_marks_cap(rt, &sc) + sp_st.n_orphans;
    for (stream_ent *e = sp_st.streams; e; e = e->next)
        cap++;
    mark *v = sp_mem_alloc((cap ? cap : 1) * sizeof(*v));
    if (!v) {
        sp_unlock();
        sp_st_scan_all_done(&sc);
        return 0;
    }
    size_t n = sp_st_null_marks(rt, &sc, v);
    /* Every stream, blocking ones too (a query of the null stream does not
     * say whether a blocking stream still runs), one whose destroy a host
     * function handed to the reaper (not destroyed while this marks:
     * sp_streams_destroy_rt waits), and the tail marker of each destroyed
     * stream whose work may still run. */
    int busy = 0;
    for (stream_ent *e = sp_st.streams; e && n < cap; e = e->next) {
        if (e->rt != rt)
            continue;
        if (!e->capturing)
            v[n++] = (mark){MK_STREAM, rt, e->place, e->s, NULL, NULL, 0, sp_st_needs_switch(rt)};
        else if (capture_busy)
            busy = 1;
    }
    for (shared_ev *t = sp_st.orphans; t && n < cap; t = t->next)
        if (t->rt == rt && t->ev && !__atomic_load_n(&t->done, __ATOMIC_RELAXED)) {
            t->refs++;
            v[n++] = (mark){MK_SHARED, rt, t->place, NULL, NULL, t, 0, 0};
        }
    sp_st.marking++;
    sp_unlock();
    sp_st_scan_all_done(&sc);
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
            sp_st_go_to_for_events(rt, ps, v[i].place);
            if (o->event_query(v[i].sh->ev) == 0)
                __atomic_store_n(&v[i].sh->done, 1, __ATOMIC_RELAXED);
            else
                idle = 0;
            continue;
        }
        if (v[i].switch_place)
            sp_st_go_to(rt, &ps[rt], v[i].place);
        if (o->stream_query(v[i].s) != 0)
            idle = 0;
    }
    sp_st_go_back_all(ps);
    sp_relaxed_leave(old);
    sp_lock();
    for (size_t i = 0; i < n; i++)
        if (v[i].kind == MK_SHARED)
            sp_st_unref(v[i].sh);
    sp_st.marking--;
    sp_lock_broadcast();
    sp_unlock();
    sp_mem_free(v);
    sp_st_flush_dead();
    return idle;
}

int sp_streams_idle(int rt) { return streams_idle(rt, 0); }

int sp_streams_quiet(int rt) { return streams_idle(rt, 1); }

int sp_streams_one_device(int rt)
{
    /* (Set once at start-up: read without the lock.) */
    return sp_rt(rt)->ordinal_places && __atomic_load_n(&sp_st.ndev[rt], __ATOMIC_RELAXED) == 1;
}
