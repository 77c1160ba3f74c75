/*
 * captures.c - stream captures (see streams.h): a capture's begin and end
 * through the runtime, the event recorded just before it began (what a
 * release waits for on that stream meanwhile), and waiting for the
 * captures a marker set saw to end.
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

/* Lock held: make e's state what the runtime said (mode: the one asked
 * where it begins). */
static void set_capturing(stream_ent *e, int capturing, int mode, shared_ev **pre)
{
    if (capturing && !e->capturing) {
        e->capturing = 1;
        e->capturer = pthread_self();
        e->capture_mode = mode;
        sp_st.n_capturing++;
        sp_st_unref(e->pre);
        e->pre = *pre;
        *pre = NULL;
    } else if (!capturing && e->capturing) {
        e->capturing = 0;
        sp_st.n_capturing--;
        sp_st_unref(e->pre);
        e->pre = NULL;
    }
}

int sp_streams_begin_capture_rt(int rt, void *s, int mode, sp_capture_call call, void *arg)
{
    void *here = NULL;
    if (sp_rt(rt)->get_place(&here) != 0)
        here = NULL;
    sp_lock();
    while (sp_st.marking)
        sp_lock_wait();
    stream_ent **pp = sp_st_find_stream(rt, s);
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
            e->flags = sp_st_is_per_thread(rt, s) ? 0 : SP_STREAM_NON_BLOCKING;
            e->capturer = pthread_self();
            e->next = sp_st.streams;
            sp_st.streams = e;
        }
    }
    if (!e) {
        sp_unlock();
        return call(s, arg);
    }
    int already = e->capturing;
    e->begin_pending++;
    sp_st.n_unsettled++;
    sp_unlock();

    /* The work enqueued before the capture still runs: an event covers it. */
    shared_ev *pre = NULL;
    if (!already && !sp_tls_in_hostfn) {
        int old = sp_relaxed_enter();
        pre = sp_st_new_shared(rt, here, sp_st_record_on(rt, s));
        sp_relaxed_leave(old);
    }
    int r = call(s, arg);
    int capturing = r == 0 ? 1 : runtime_capturing(rt, s);
    if (capturing < 0)
        capturing = already;

    sp_lock();
    pp = sp_st_find_stream(rt, s);
    e = *pp;
    if (e) {
        set_capturing(e, capturing, mode, &pre);
        e->begin_pending--;
        if (e->foreign && !e->capturing && !e->begin_pending)
            sp_st_drop_entry(pp);
    }
    sp_st.n_unsettled--;
    sp_st_unref(pre);
    sp_lock_broadcast();
    sp_unlock();
    sp_st_flush_dead();
    return r;
}

int sp_streams_end_capture_rt(int rt, void *s, sp_capture_call call, void *arg)
{
    int r = call(s, arg);
    int capturing = runtime_capturing(rt, s);
    if (capturing < 0) /* ended, or invalidated and ended */
        capturing = !(r == 0 || r == sp_rt(rt)->err_capture_invalidated);
    sp_lock();
    stream_ent **pp = sp_st_find_stream(rt, s);
    stream_ent *e = *pp;
    if (e) {
        shared_ev *none = NULL;
        set_capturing(e, capturing, SP_CAPTURE_GLOBAL, &none);
        if (e->foreign && !e->capturing && !e->begin_pending)
            sp_st_drop_entry(pp);
        sp_lock_broadcast();
    }
    sp_unlock();
    sp_st_flush_dead();
    return r;
}

int sp_streams_capture_refuses(int rt, void **stream)
{
    *stream = NULL;
    if (sp_tls_in_hostfn)
        return 0;
    sp_lock();
    int open = sp_st.n_capturing > 0;
    sp_unlock();
    if (!open)
        return 0;
    const sp_rt_ops *o = sp_rt(rt);
    if (!o->present())
        return 0;
    int mine = SP_CAPTURE_RELAXED;
    o->exchange_mode(&mine);
    int back = mine;
    o->exchange_mode(&back);
    if (mine == SP_CAPTURE_RELAXED)
        return 0;
    pthread_t self = pthread_self();
    int why = 0;
    sp_lock();
    for (stream_ent *e = sp_st.streams; e && why != SP_CAPTURE_REFUSED_OWN; e = e->next) {
        if (!e->capturing || e->rt != rt)
            continue;
        if (pthread_equal(e->capturer, self) ? e->capture_mode != SP_CAPTURE_RELAXED
                                             : mine == SP_CAPTURE_GLOBAL && e->capture_mode == SP_CAPTURE_GLOBAL) {
            why = pthread_equal(e->capturer, self) ? SP_CAPTURE_REFUSED_OWN : SP_CAPTURE_REFUSED_OTHER;
            *stream = e->s;
        }
    }
    sp_unlock();
    return why;
}

void sp_marks_wait_captures(int *stop)
{
    int reported = 0;
    while ((sp_st.n_capturing > 0 || sp_st.n_unsettled > 0) && !*stop) {
        if (!reported) {
            SP_COUNT(capture_deferrals);
            sp_diag(SP_CAPTURE_DEFERRED, NULL,
                    "%d stream(s) capturing and the runtime refused a release marker: the release "
                    "waits for the capture to end",
                    sp_st.n_capturing);
            reported = 1;
        }
        sp_lock_wait();
    }
}
