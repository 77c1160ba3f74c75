/*
 * reaper.c - deferred releases: a release started, queued, and taken with
 * the others queued as one batch; the device work enqueued before it
 * waited for (the reaper's markers, or the ordered caller's); the real
 * unregister that completes it. The reaper's thread (thread.c) runs the
 * batches; their revive grace: grace.c; the streams the markers cover:
 * streams/.
 */
#include "reaper.h"
#include "reaper_internal.h"
#include "diag.h"
#include "hold.h"
#include "options.h"
#include "runtime.h"
#include "streams.h"

/* For the hold (hold.h): a batch's links and a range's release sequence. */
sp_range *sp_reaper_batch_next(const sp_range *r) { return sp_rel(r)->next; }
void sp_reaper_batch_link(sp_range *r, sp_range *next) { sp_rel(r)->next = next; }
uint64_t sp_reaper_release_seq(const sp_range *r) { return sp_rel(r)->seq; }

/* The reaper's state (reaper_internal.h). */
struct sp_reaper_state sp_rp;

/* ---- releases started ---------------------------------------------------- */

/* Lock held. The reaper is needed: started now, or at the next runtime
 * hook if this thread is inside a memory hook. */
static void want_reaper(void) { sp_reaper_thread_start(); }

/* The releases this thread started (a fork's prepare handlers: did the
 * program's handler start one? Another thread's, racing with the fork, are
 * as a bare run leaves them). */
static __thread uint64_t thread_last_seq __attribute__((tls_model("initial-exec")));

/* Lock held. r leaves LIVE (or starts a new release); its sequence. */
static uint64_t start_release(sp_range *r)
{
    if (r->state != SP_RANGE_RELEASING) {
        r->state = SP_RANGE_RELEASING;
        sp_rp.n_releasing++;
    }
    r->nest = 0;
    sp_rel(r)->seq = __atomic_add_fetch(&sp_rp.submit_seq, 1, __ATOMIC_RELAXED);
    thread_last_seq = sp_rel(r)->seq;
    sp_rel(r)->no_grace = 0;
    if (sp_opt.revive && r->size >= (size_t)sp_opt.revive_grace_bytes &&
        !sp_reaper_grace_wanted(r->size)) {
        sp_rel(r)->no_grace = 1;
        SP_COUNT(graces_skipped);
    }
    if (!r->t_unregister_ns)
        r->t_unregister_ns = sp_now_ns();
    SP_COUNT(releases_submitted);
    return sp_rel(r)->seq;
}

uint64_t sp_reaper_release_ordered(sp_range *r)
{
    uint64_t seq = start_release(r);
    if (!sp_rel(r)->queued && !sp_rel(r)->in_batch)
        sp_rel(r)->waiting = 1;
    return seq;
}

void sp_reaper_release(sp_range *r)
{
    start_release(r);
    sp_rel(r)->waiting = 0;
    if (!sp_rel(r)->queued && !sp_rel(r)->in_batch)
        sp_reaper_enqueue(r);
    want_reaper();
    if (sp_rp.idle)
        __atomic_store_n(&sp_rp.need_wake, 1, __ATOMIC_RELAXED);
}

void sp_reaper_poke(void)
{
    want_reaper();
    if (sp_rp.idle)
        __atomic_store_n(&sp_rp.need_wake, 1, __ATOMIC_RELAXED);
}

/* ---- the device work before a release ------------------------------------ */

/* The release waits for the work enqueued before a capture began, not for
 * the capture's end: said once per marker set that saw one. */
static void say_capture_deferred(const sp_range *r)
{
    SP_COUNT(capture_deferrals);
    sp_diag(SP_CAPTURE_DEFERRED, r,
            "release during a stream capture: captured work never runs, so the release waits "
            "for the work enqueued before the capture began, not for the capture's end");
}

int sp_wait_prior_work(uintptr_t base)
{
    sp_lock();
    sp_marks *m = sp_marks_take();
    sp_unlock();
    if (!m)
        return 0;
    int ok = sp_marks_record(m) == 0;
    uint64_t waited = 0;
    if (ok && !sp_marks_done(m)) {
        uint64_t t0 = sp_now_ns();
        sp_marks_wait(m);
        waited = sp_now_ns() - t0;
    }
    int saw_capture = sp_marks_saw_capture(m);
    sp_marks_put(m);
    if (ok && saw_capture) {
        sp_lock();
        say_capture_deferred(base ? sp_reg_find(base) : NULL);
        sp_unlock();
    }
    /* Work still running: a marker behind none completes in microseconds;
     * one that took a millisecond or more waited for the program's work.
     * A hazard only where the device may use the range from any work (its
     * device address was asked, or it was registered mapped): other work
     * on a range the device does not address is no hazard to it. */
    if (ok && base && waited >= 1000000ull) {
        sp_lock();
        sp_range *r = sp_reg_find(base);
        if (r && (r->used || (r->flags & sp_rt(r->rt)->mapped_flag)))
            sp_hazard_prevented(SP_HZ_INFLIGHT_UNREGISTER, r,
                            "unregister of 0x%lx with device work enqueued before it still "
                            "running (waited %.1f ms)",
                            (unsigned long)base, (double)waited / 1e6);
        sp_unlock();
    }
    return ok;
}

/* ---- the real unregister, and batches ------------------------------------ */

/* Lock held: the real unregister of r, its actions, and its removal. The
 * real call's answer. */
static int complete_release(sp_range *r)
{
    r->unregistering = 1;
    uintptr_t base = r->base;
    uint64_t tok = sp_reg_op_begin(base, r->size);
    const sp_rt_ops *o = sp_rt(r->rt);
    sp_unlock();
    int e = o->unregister(r->place, (void *)base);
    uint64_t done = sp_now_ns();
    sp_lock();
    sp_reg_op_end(tok);
    if (e != 0 && e != o->err_not_registered && e != o->err_gone) {
        /* The runtime may still pin it: keep the memory alive and the range
         * registered (LIVE, its nest 1); a later unregister tries again,
         * exit reports it as a leak. */
        sp_diag(SP_RUNTIME_ERROR, r,
                "real %s(0x%lx) in a release returned %d: the range stays "
                "registered and its memory is kept (never freed or unmapped)",
                o->unregister_name, (unsigned long)base, e);
        sp_actions_drop(r);
        r->unregistering = 0;
        r->stuck = 1;
        r->state = SP_RANGE_LIVE;
        r->nest = 1;
        sp_rp.n_releasing--;
        sp_lock_broadcast();
        return e;
    }
    if (e != 0 && e == o->err_gone)
        sp_log(SP_LOG_INFO, "exit",
               "real %s(0x%lx) in a release: the runtime was already torn down (%d); the "
               "registration went with it",
               o->unregister_name, (unsigned long)base, e);
    else if (e != 0)
        sp_diag(SP_RUNTIME_ERROR, r,
                "real %s(0x%lx) in a release returned %d (the runtime no longer "
                "had it)",
                o->unregister_name, (unsigned long)base, e);
    sp_record_latency(r->t_unregister_ns, done);
    /* Released: actions deferred from now on do not wait for r. */
    r->released = 1;
    if (sp_actions_settle(r))
        sp_actions_run_ready();
    sp_history_add(SP_EV_RELEASED, r->base, r->size, NULL);
    sp_rp.graveyard[sp_rp.grave_i++ % SP_GRAVEYARD] = r->base;
    sp_rp.n_releasing--;
    SP_COUNT(releases_completed);
    sp_grave *g = &sp_rp.graves[sp_rp.graves_i++ % SP_GRAVE_SITES];
    sp_site_free(g->reg);
    sp_site_free(g->unreg);
    *g = (sp_grave){r->base, r->size, r->rt, sp_sites(r)->reg, sp_sites(r)->unreg};
    sp_sites(r)->reg = sp_sites(r)->unreg = NULL;
    sp_reg_remove(r);
    sp_lock_broadcast();
    return e;
}

/* Lock held on entry and exit. Waits for the device work enqueued before
 * now (a marker set); never records into a capturing stream. */
static void wait_prior_work(void)
{
    for (;;) {
        sp_marks *m = sp_marks_take();
        if (!m) {
            /* Out of memory: try again shortly, never release early. */
            sp_lock_timedwait_ns(sp_now_ns() + 1000000ull);
            continue;
        }
        sp_unlock();
        int rc = sp_marks_record(m);
        if (rc == 0)
            sp_marks_wait(m);
        int saw_capture = sp_marks_saw_capture(m);
        sp_marks_put(m);
        sp_lock();
        if (rc == 0) {
            if (saw_capture)
                say_capture_deferred(NULL);
            return;
        }
        /* Refused: during a capture, wait for it to end (the exit drain
         * does not wait for that); otherwise (the runtime failing) try
         * again shortly. Never release early. */
        uint64_t retry = sp_now_ns() + 1000000ull;
        sp_rp.capture_blocked = 1;
        sp_lock_broadcast();
        sp_marks_wait_captures(&sp_rp.stop);
        sp_rp.capture_blocked = 0;
        if (sp_rp.stop)
            return;
        while (!sp_rp.stop && sp_now_ns() < retry)
            sp_lock_timedwait_ns(retry);
    }
}

/* Lock held. Takes every queued release as one batch. */
static sp_range *take_batch(void)
{
    sp_range *batch = sp_rp.q_head;
    sp_rp.q_head = sp_rp.q_tail = NULL;
    for (sp_range *r = batch; r; r = sp_rel(r)->next) {
        sp_rel(r)->queued = 0;
        sp_rel(r)->in_batch = 1;
    }
    return batch;
}

/* Lock held (released while waiting). The batch's markers have completed:
 * each range is released, unless it was revived or unregistered again after
 * the markers (mark_seq: the last release they cover). */
void sp_reaper_finish_batch(sp_range *batch, uint64_t mark_seq)
{
    sp_range *r = batch;
    while (r) {
        sp_range *next = sp_rel(r)->next;
        sp_rel(r)->in_batch = 0;
        if (r->state != SP_RANGE_RELEASING) {
            /* revived */
        } else if (sp_rel(r)->seq > mark_seq) {
            if (!sp_rel(r)->queued)
                sp_reaper_enqueue(r); /* unregistered again after the markers: new round */
        } else if (sp_reaper_grace_left(r)) {
            sp_reaper_grace_enter(r);
        } else {
            complete_release(r);
        }
        r = next;
    }
}

int sp_reaper_release_here(uintptr_t base, uint64_t id, uint64_t seq, int covered, int grace_ok,
                           int *real)
{
    sp_range *r = sp_reg_find_containing(base);
    if (!r || r->base != base || r->id != id || sp_rel(r)->seq != seq || !sp_rel(r)->waiting)
        return 0; /* gone, or released again since (that release is another's) */
    sp_rel(r)->waiting = 0;
    if (r->state != SP_RANGE_RELEASING)
        return 0; /* revived meanwhile */
    if (covered && !r->unregistering && !sp_rp.abandoned && !sp_rp.stop) {
        /* A range an identical re-register may revive waits out its grace
         * first (a free of it ends the grace). */
        if (grace_ok && sp_reaper_grace_left(r)) {
            sp_reaper_grace_enter(r);
            return 0;
        }
        SP_COUNT(releases_inline);
        *real = complete_release(r);
        return *real == 0 ? 1 : 2;
    }
    /* Not known to be covered (no marker set could be recorded, or this
     * thread captures): the reaper releases it, with markers of its own. */
    sp_reaper_enqueue(r);
    sp_reaper_thread_start();
    if (sp_rp.idle)
        __atomic_store_n(&sp_rp.need_wake, 1, __ATOMIC_RELAXED);
    return 0;
}

/* Lock held. One batch: take it, wait for the device work enqueued before
 * it, release it. Returns 1 if exit gave up on the work meanwhile. */
int sp_reaper_release_batch(void)
{
    sp_range *batch = take_batch();
    uint64_t mark_seq = sp_rp.submit_seq;
    wait_prior_work();
    if (sp_rp.abandoned)
        return 1; /* no call into a runtime torn down */
    SP_COUNT(marker_batches);
    sp_reaper_finish_batch(sp_hold_keep(batch, mark_seq), mark_seq); /* the hold keeps some */
    return 0;
}

void sp_reaper_table_sizes(sp_table_sizes *t)
{
    sp_lock();
    t->ranges = sp_reg_count();
    t->releasing = sp_rp.n_releasing;
    t->actions = sp_actions_count();
    sp_streams_sizes(&t->streams, &t->orphans);
    sp_unlock();
}

uint64_t sp_reaper_submitted(void) { return thread_last_seq; }
