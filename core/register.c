/*
 * register.c - the register hook: nesting, overlaps, revival, memory the
 * runtime already owns, memory a forked child inherited (DESIGN section 2).
 */
#include "core.h"
#include "core_internal.h"

#include "maps.h"

#include <stdio.h>

/* Arguments no runtime accepts: err_invalid_value, with its diagnostic. */
static int check_args(const sp_rt_ops *o, const sp_call *c, void *p, size_t size,
                      unsigned flags)
{
    sp_diag_range v = {(uintptr_t)p, size, -1, NULL, NULL};
    if (!p || size == 0) {
        sp_diag_in(SP_INVALID_ARGUMENT, &v, "%s(%p, %zu, 0x%x)%s: %s", c->name, p, size, flags,
                   sp_core_via(o, c), p ? "size 0" : "NULL pointer");
        return o->err_invalid_value;
    }
    if (size > UINTPTR_MAX - (uintptr_t)p) {
        sp_diag_in(SP_INVALID_ARGUMENT, &v,
                   "%s(%p, %zu, 0x%x)%s: the range wraps around the address space", c->name, p,
                   size, flags, sp_core_via(o, c));
        return o->err_invalid_value;
    }
    return 0;
}

enum settled { SETTLED_NONE, SETTLED_ANSWERED, SETTLED_OTHER_RUNTIME, SETTLED_ASK_RUNTIME };

/* How long a register waits for a release another thread's capture holds
 * back before it answers as the runtime does for an overlap. */
#define CAPTURE_WAIT_NS 2000000000ull

/* What the ranges overlapping a new registration make of it: nested in an
 * identical live one, refused by another live one (by safepin, or by the
 * runtime: runtime_refuses_overlap, or pages no runtime can pin, whose
 * refusal comes first, G10), reviving an identical pending one, or waiting
 * for a pending release. Another runtime's range: each runtime pins the
 * memory for itself, as bare. Lock held (released while waiting). *site
 * becomes NULL where a range took it. */
static enum settled settle_overlaps(int rt, const sp_rt_ops *o, const sp_call *c, void *p,
                                    size_t size, unsigned flags, sp_site **site, int *e)
{
    uintptr_t base = (uintptr_t)p;
    uint64_t until = 0; /* how long another thread's capture may hold a release back */
    for (;;) {
        sp_range *r = sp_reg_find_overlap(base, size);
        if (!r)
            return SETTLED_NONE;
        if (r->registering) {
            sp_lock_wait();
            continue;
        }
        if (r->rt != rt)
            return SETTLED_OTHER_RUNTIME;
        int same = r->base == base && r->size == size && r->flags == flags;
        if (r->state == SP_RANGE_LIVE && same) {
            r->nest++;
            SP_COUNT(nested);
            sp_history_add(SP_EV_NEST, base, size, *site);
            sp_diag(SP_NESTED_REGISTER, r, "%s(%p, %zu, 0x%x)%s: nested (count %d)%s", c->name,
                    p, size, flags, sp_core_via(o, c), r->nest, o->nest_note ? o->nest_note : "");
            *e = 0;
            return SETTLED_ANSWERED;
        }
        if (r->state == SP_RANGE_LIVE) {
            if (o->runtime_refuses_overlap ||
                !sp_maps_pinnable(base, size, flags & SP_REGISTER_READ_ONLY))
                return SETTLED_ASK_RUNTIME;
            SP_COUNT(overlapping_refused);
            sp_history_add(SP_EV_REFUSED, base, size, *site);
            sp_diag(SP_OVERLAPPING_REGISTER, r,
                    "%s(%p, %zu, 0x%x)%s overlaps the live registration 0x%lx (%zu bytes, flags "
                    "0x%x): %s",
                    c->name, p, size, flags, sp_core_via(o, c), (unsigned long)r->base, r->size, r->flags,
                    o->code_name(o->err_already_registered));
            *e = o->err_already_registered;
            return SETTLED_ANSWERED;
        }
        /* RELEASING: revive an identical one (unless its pages can no longer
         * be pinned: mprotect is not watched, so the mappings are asked; the
         * runtime's refusal comes first, G10), otherwise wait for it. */
        if (sp_opt.revive && same && sp_maps_pinnable(base, size, flags & SP_REGISTER_READ_ONLY) &&
            sp_reaper_revive(r)) {
            SP_COUNT(revived);
            /* Said with the stacks of the registration revived and of its
             * unregister, before they are replaced. */
            sp_diag(SP_REVIVED, r,
                    "%s(%p, %zu, 0x%x)%s while its release was pending: that registration was revived "
                    "(neither the real unregister nor a real register was made)",
                    c->name, p, size, flags, sp_core_via(o, c));
            sp_site_free(sp_sites(r)->reg);
            sp_site_free(sp_sites(r)->unreg);
            sp_sites(r)->reg = *site;
            sp_sites(r)->unreg = NULL;
            sp_history_add(SP_EV_REVIVE, base, size, *site);
            *site = NULL;
            *e = 0;
            return SETTLED_ANSWERED;
        }
        const char *cannot_wait, *waits_for;
        if (sp_tls_in_hostfn) {
            /* Waiting here could wait for this very host function. */
            cannot_wait = "from a host function";
            waits_for = "is pending";
        } else {
            SP_COUNT(waits_for_release);
            if (sp_reaper_wait_range_unless_capture(r->base, r->id) >= 0)
                continue;
            /* The release waits for a capture to end. This thread's own
             * never ends while it waits; another thread's may wait on this
             * one: the wait is bounded, and safepin never hangs the
             * program (the answer is then the runtime's for an overlap). */
            if (!sp_streams_thread_captures()) {
                uint64_t now = sp_now_ns();
                if (!until)
                    until = now + CAPTURE_WAIT_NS;
                if (now < until) {
                    sp_lock_timedwait_ns(now + 5000000ull < until ? now + 5000000ull : until);
                    continue;
                }
                cannot_wait = "during another thread's capture";
                waits_for = "waited 2 s for that capture to end";
            } else {
                cannot_wait = "during this thread's capture";
                waits_for = "waits for a capture to end";
            }
        }
        /* Formatted by sp_diag, on safepin's stack (G12). */
        sp_diag(SP_OVERLAPPING_REGISTER, r, "%s(%p, %zu)%s %s overlaps 0x%lx, whose release %s: %s",
                c->name, p, size, sp_core_via(o, c), cannot_wait, (unsigned long)r->base, waits_for,
                o->code_name(o->err_already_registered));
        *e = o->err_already_registered;
        return SETTLED_ANSWERED;
    }
}

/* A register overlapping a live range, answered by the runtime, serialized
 * with that range's own calls (G5); its already-registered answer is the
 * overlap refusal safepin reports. Lock NOT held. */
static int ask_runtime(const sp_rt_ops *o, const sp_call *c, sp_register_thunk thunk, void *real,
                       void *p, size_t size, unsigned flags, sp_site *site)
{
    uintptr_t base = (uintptr_t)p;
    uint64_t tok = sp_reg_op_enter(base, size);
    int e = thunk(real, p, size, flags);
    sp_reg_op_leave(tok);
    sp_lock();
    if (e == o->err_already_registered) {
        sp_range *r = sp_reg_find_overlap(base, size);
        SP_COUNT(overlapping_refused);
        sp_history_add(SP_EV_REFUSED, base, size, site);
        sp_diag(SP_OVERLAPPING_REGISTER, r,
                "%s(%p, %zu, 0x%x)%s overlaps the live registration 0x%lx (%zu bytes, flags "
                "0x%x): %s",
                c->name, p, size, flags, sp_core_via(o, c), (unsigned long)(r ? r->base : 0),
                r ? r->size : 0, r ? r->flags : 0, o->code_name(e));
    } else {
        sp_log(SP_LOG_INFO, "info",
               "%s(%p, %zu, 0x%x)%s overlaps a live registration; %s answer, %d, passed "
               "through%s",
               c->name, p, size, flags, sp_core_via(o, c), o->whose, e, e == 0 ? " (not tracked)" : "");
    }
    sp_unlock();
    sp_site_free(site);
    return e;
}

/* 1 if the runtime already owns p: its register and the matching unregister
 * are the runtime's business. Never from a host function. */
static int runtime_knows(const sp_rt_ops *o, const void *p)
{
    if (sp_tls_in_hostfn || !o->knows)
        return 0;
    int old = sp_relaxed_enter();
    int k = o->knows(p);
    sp_relaxed_leave(old);
    return k;
}

/* The real register of r (inserted, registering), serialized by tok; r
 * stays if it succeeded, else it goes. Lock NOT held. */
static int register_range(const sp_rt_ops *o, const sp_call *c, sp_register_thunk thunk,
                          void *real, sp_range *r, void *p, size_t size, unsigned flags,
                          uint64_t tok)
{
    int foreign = runtime_knows(o, p);
    int e = thunk(real, p, size, flags);

    sp_lock();
    sp_reg_op_end(tok);
    if (foreign)
        sp_log(SP_LOG_INFO, "info",
               "%s(%p, %zu)%s: the runtime already knows this memory (its own allocation, or a "
               "registration made elsewhere); passed through, not tracked: returned %d",
               c->name, p, size, sp_core_via(o, c), e);
    if (foreign || e != 0) {
        sp_site_free(sp_sites(r)->reg);
        sp_sites(r)->reg = NULL;
        sp_reg_remove(r);
    } else {
        r->registering = 0;
        (void)sp_reaper_take_owed(r->base); /* registered anew: nothing owed there */
        /* Here, in the program's runtime call, before any memory hook may
         * need it; only once the runtime registered something: a register
         * it refuses (a forked child's copy of a runtime that cannot run
         * there) leaves no thread of safepin's in the process. */
        sp_reaper_start();
        SP_COUNT(registrations);
        sp_history_add(SP_EV_REGISTER, r->base, size, sp_sites(r)->reg);
    }
    sp_lock_broadcast();
    sp_unlock();
    if (e == 0 && !foreign && o->registered)
        o->registered();
    return e;
}

int sp_core_register(int rt, const sp_call *c, sp_register_thunk thunk, void *real, void *p,
                     size_t size, unsigned flags)
{
    const sp_rt_ops *o = sp_rt(rt);
    SP_TRACE("%s(%p, %zu, 0x%x)%s", c->name, p, size, flags, sp_core_via(o, c));
    int e = check_args(o, c, p, size, flags);
    if (e != 0)
        return e;
    if (sp_reg_inherited((uintptr_t)p, size)) {
        /* A forked child, on memory its parent had registered: the runtime's
         * state there is unknown, so the call goes to it as it is (G9). */
        sp_log(SP_LOG_INFO, "info",
               "%s(%p, %zu)%s: memory registered by the parent process before fork; passed "
               "through, not tracked",
               c->name, p, size, sp_core_via(o, c));
        return thunk(real, p, size, flags);
    }
    void *place = NULL;
    int dev = 0;
    if (!sp_tls_in_hostfn && o->where && o->where(&place, &dev) != 0) {
        place = NULL;
        dev = 0;
    }
    sp_site *site = sp_site_capture_register();

    sp_range *r = NULL;
    uint64_t tok = 0;
    sp_lock();
    enum settled settled = settle_overlaps(rt, o, c, p, size, flags, &site, &e);
    if (settled == SETTLED_NONE && (r = sp_reg_insert((uintptr_t)p, size, flags, dev)) != NULL) {
        r->rt = rt;
        r->place = place;
        r->registering = 1;
        sp_sites(r)->reg = site;
        site = NULL;
        sp_streams_add_place(rt, place);
        tok = sp_reg_op_begin((uintptr_t)p, size);
    }
    sp_unlock();
    if (r)
        sp_postmortem_install(); /* the first registration's: once */

    switch (settled) {
    case SETTLED_ASK_RUNTIME:
        return ask_runtime(o, c, thunk, real, p, size, flags, site);
    case SETTLED_OTHER_RUNTIME:
        sp_site_free(site);
        sp_log(SP_LOG_INFO, "info",
               "%s(%p, %zu)%s: memory another runtime registered; passed through, not tracked",
               c->name, p, size, sp_core_via(o, c));
        return thunk(real, p, size, flags);
    case SETTLED_ANSWERED:
        sp_site_free(site);
        return e;
    case SETTLED_NONE:
        break;
    }
    if (r)
        return register_range(o, c, thunk, real, r, p, size, flags, tok);
    /* A registration safepin cannot track would have none of its guarantees
     * (a later free would leave it stale): refused, with the answer the
     * runtime gives when it runs out of memory. */
    sp_site_free(site);
    sp_log(SP_LOG_ERROR, "runtime-error",
           "out of memory in safepin's registry: %s(%p, %zu, 0x%x)%s refused with %s rather than "
           "registered untracked",
           c->name, p, size, flags, sp_core_via(o, c), o->code_name(o->err_out_of_memory));
    return o->err_out_of_memory;
}
