/*
 * unregister.c - the unregister hook: double and interior unregisters,
 * nesting, and the stream-ordered release in its three modes (sync,
 * ordered with back-pressure, async), deferred inside host functions.
 */
#include "core.h"
#include "core_internal.h"

sp_range *sp_core_settled_containing(uintptr_t p)
{
    for (;;) {
        sp_range *r = sp_reg_find_containing(p);
        if (!r || !r->registering)
            return r;
        sp_lock_wait();
    }
}

/* Not the runtime's range of safepin's: the runtime answers (it may hold
 * registrations safepin never saw, or have no device at all); its error
 * passes through. Lock held on entry, released on return. */
static int unregister_unknown(int rt, const sp_rt_ops *o, const sp_call *c, void *p,
                              sp_site *site)
{
    uintptr_t base = (uintptr_t)p;
    int dbl = sp_reaper_recently_released(base);
    uint64_t tok = sp_reg_op_begin(base, 1);
    sp_unlock();
    int e = o->host_unregister(p);
    sp_lock();
    sp_reg_op_end(tok);
    if (e == o->err_not_registered && sp_reaper_take_owed(base)) {
        /* Freed while registered, then unregistered by the program: safepin
         * released it at the free; bare, the runtime still had the stale
         * registration and answers success. */
        SP_TRACE("%s(%p)%s: released at its free (freed-while-registered): success", c->name, p,
                 sp_core_via(o, c));
        sp_history_add(SP_EV_UNREGISTER, base, 0, site);
        e = 0;
    } else if (e == o->err_not_registered) {
        sp_diag_range v = {base, 0, rt, NULL, NULL};
        if (dbl && sp_reaper_released_view(base, &v))
            sp_diag_in(SP_DOUBLE_UNREGISTER, &v,
                       "%s(%p)%s: already unregistered (and released): the range 0x%lx (%zu bytes)",
                       c->name, p, sp_core_via(o, c), (unsigned long)v.base, v.size);
        else if (dbl)
            sp_diag_in(SP_DOUBLE_UNREGISTER, &v, "%s(%p)%s: already unregistered (and released)",
                       c->name, p, sp_core_via(o, c));
        else
            sp_diag_in(SP_UNREGISTER_UNKNOWN, &v, "%s(%p)%s: not a registered pointer", c->name,
                       p, sp_core_via(o, c));
    }
    sp_unlock();
    sp_site_free(site);
    return e;
}

/* 1 if rt's own unregister, made in the program's call, covers G1 itself:
 * it waits for the work of every stream of its device enqueued before it,
 * there is one device, and no hold keeps the device-wide wait off the
 * program's threads. */
static int runtime_waits_here(int rt)
{
    const sp_rt_ops *o = sp_rt(rt);
    return !sp_hold_runtime(rt) && o->unregister_waits_all && o->unregister_waits_all() &&
           sp_streams_one_device(rt);
}

int sp_core_unregister(int rt, const sp_call *c, void *p)
{
    const sp_rt_ops *o = sp_rt(rt);
    SP_TRACE("%s(%p)%s%s", c->name, p, sp_core_via(o, c), sp_tls_in_hostfn ? " in a host function" : "");
    if (!p) {
        sp_diag_range v = {0, 0, rt, NULL, NULL};
        sp_diag_in(SP_INVALID_ARGUMENT, &v, "%s(NULL)%s", c->name, sp_core_via(o, c));
        return o->err_invalid_value;
    }
    uintptr_t base = (uintptr_t)p;
    sp_site *site = sp_site_capture_entry();
    /* (Asked before the lock: the first time, a version query; during a
     * capture, the thread's capture mode.) */
    int runtime_here = !sp_tls_in_hostfn && runtime_waits_here(rt);
    void *cap_stream = NULL;
    int cap_refused = sp_streams_capture_refuses(rt, &cap_stream);

    sp_lock();
    sp_range *r = sp_core_settled_containing(base);
    if (!r || r->rt != rt)
        return unregister_unknown(rt, o, c, p, site);
    if (r->base != base) {
        /* Inside a range the program unregistered already: the answer for
         * memory no longer registered (CUDA's 713, not its 1), as once the
         * release completed (G4). */
        int live = r->state == SP_RANGE_LIVE;
        int code = live ? o->err_interior : o->err_not_registered;
        sp_diag(SP_UNREGISTER_INTERIOR, r,
                "%s(%p)%s: %zu bytes inside the range 0x%lx (%zu bytes); %s, the range stays %s",
                c->name, p, sp_core_via(o, c), (size_t)(base - r->base), (unsigned long)r->base, r->size,
                o->code_name(code), live ? "registered" : "pending release");
        sp_unlock();
        sp_site_free(site);
        return code;
    }
    if (r->state == SP_RANGE_RELEASING && sp_reaper_take_owed(base)) {
        /* Freed while registered (its release is under way), then
         * unregistered by the program: what the runtime answers for the
         * stale registration it would still hold without safepin. */
        sp_history_add(SP_EV_UNREGISTER, base, r->size, site);
        sp_unlock();
        sp_site_free(site);
        return 0;
    }
    if (r->state == SP_RANGE_RELEASING) {
        sp_diag(SP_DOUBLE_UNREGISTER, r, "%s(%p)%s: already unregistered", c->name, p, sp_core_via(o, c));
        sp_unlock();
        sp_site_free(site);
        return o->err_not_registered;
    }
    if (--r->nest > 0) {
        sp_history_add(SP_EV_UNREGISTER, base, r->size, site);
        /* The range stays registered for its other registration, but the
         * program's call is an unregister: where it would wait (ordered,
         * sync), it waits for the device work before it, as the runtime's
         * own does, so the program reads what that work wrote. */
        int wait = sp_opt.unreg_mode != SP_UNREG_ASYNC && !sp_tls_in_hostfn &&
                   !sp_streams_thread_captures();
        sp_unlock();
        sp_site_free(site);
        if (wait)
            sp_wait_prior_work(0); /* nothing is released: no hazard to name */
        return 0;
    }
    sp_site_free(sp_sites(r)->unreg);
    sp_sites(r)->unreg = site;
    r->t_unregister_ns = sp_now_ns();
    sp_history_add(SP_EV_UNREGISTER, base, r->size, site);
    uint64_t id = r->id;
    int mode = sp_opt.unreg_mode;
    if (sp_tls_in_hostfn) {
        mode = SP_UNREG_ASYNC; /* waiting here could wait for this very host function (G8) */
        sp_hazard_prevented(SP_HZ_HOSTFN_RELEASE, r, "%s(%p) in a host function", c->name, p);
    }
    if (cap_refused)
        sp_hazard_prevented(SP_HZ_CAPTURE_RELEASE, r, "%s(%p) while %s captures stream %p", c->name, p,
                            cap_refused == SP_CAPTURE_REFUSED_OWN ? "this thread" : "another thread",
                            cap_stream);
    int captures = sp_streams_thread_captures();
    if (mode == SP_UNREG_SYNC && captures)
        mode = SP_UNREG_ORDERED; /* never wait on the caller's own capture */
    uint64_t seq = 0;
    int by_runtime = 0, graced = 0, any_capture = 1;
    if (mode == SP_UNREG_ORDERED) {
        seq = sp_reaper_release_ordered(r);
        /* (During any capture, safepin's own wait: it waits for the work
         * enqueued before the capture began, and says so, G6.) */
        any_capture = captures || sp_streams_any_captures();
        by_runtime = runtime_here && !any_capture;
        graced = sp_reaper_release_graced(r);
    } else {
        sp_reaper_release(r);
    }
    /* (A release a capture holds back: sync returns as ordered does, G3;
     * the capture may wait on this very thread.) */
    if (mode == SP_UNREG_SYNC)
        (void)sp_reaper_wait_range_unless_capture(base, id);
    if (mode == SP_UNREG_ORDERED && !captures)
        sp_reaper_wait_backlog();
    sp_unlock();
    /* Ordered: the caller waits for the device work enqueued before the
     * call (every stream, as the runtime's own unregister does), then
     * completes the release here: no second wait on the reaper while the
     * program goes on, and the memory is the program's again at once (a
     * free of it is not deferred). Where no marker set could be recorded,
     * or this thread captures (its captured work never runs: the release
     * must not wait for it), the reaper releases it with markers of its
     * own (G1, G6). */
    if (mode == SP_UNREG_ORDERED) {
        /* Where the runtime's own unregister waits for every stream of the
         * only device, it covers that work itself (G1), made at the
         * program's call as bare: it waits for no work enqueued since. A
         * revive grace, which defers the real unregister (that would then
         * wait for work enqueued meanwhile), is kept there only where the
         * device has no work at all. Where the release is made here only
         * on an idle device (that graced range; the hold's runtimes, whose
         * unregister waits for the whole device and stalls other threads
         * meanwhile, G3), the device is asked first: every stream done
         * after the call began is the work before it done (G1), and no
         * marker round follows. A capture begun since the check above
         * makes the device not idle here (the marker round covers the
         * work enqueued before it began). */
        int hold = sp_hold_runtime(rt);
        int idle = !any_capture && (by_runtime ? graced : hold) && sp_streams_quiet(rt);
        int direct = by_runtime && !idle;
        int covered = direct || idle || (sp_wait_prior_work(base) && !captures);
        /* Relaxed, as on the reaper: another thread's capture in global
         * mode must not see (and be invalidated by) safepin's real call. */
        int old = sp_relaxed_enter();
        /* On the hold's runtimes, work other threads enqueued since the
         * call leaves the release to the reaper and the hold. */
        if (covered && !direct && !idle && hold && !sp_streams_idle(rt))
            covered = 0;
        sp_lock();
        int real = 0;
        int done = sp_reaper_release_here(base, id, seq, covered, !direct, &real);
        sp_unlock();
        sp_relaxed_leave(old);
        /* The runtime's unregister failed, or did not run: it may not have
         * waited, so safepin does before the call returns (G1). Made in the
         * program's call, its refusal is the program's answer (G10). */
        if (direct && done != 1) {
            sp_wait_prior_work(base);
            if (done == 2) {
                sp_reaper_kick();
                return real;
            }
        }
    }
    sp_reaper_kick();
    return 0;
}
