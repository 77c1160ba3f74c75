/*
 * grace.c - the revive grace: a release whose device work is done waits a
 * while, off the queue, for an identical re-register to revive it; which
 * sizes get one (graces a free ended are counted by size class), the
 * ranges in it, a revive, a free that ends one. Its predicates are inline
 * in reaper_internal.h.
 */
#include "reaper.h"
#include "reaper_internal.h"
#include "diag.h"
#include "options.h"

#include <limits.h>
#include <string.h>

/* ---- which sizes get a grace ------------------------------------------- *
 * A grace the program ends by freeing (or unmapping) the memory was pure
 * cost: the range stayed pinned, its free waited for the reaper's release
 * (the allocator handed out fresh pages meanwhile), and where the runtime's
 * unregister stalls the device the reaper's real call came while other work
 * ran, instead of in the ordered caller right after its wait, on an idle
 * device. So graces are counted by size class (a power of two): after
 * GRACE_WASTED_MAX in a row ended by a free, releases of that class get no
 * grace (the ordered caller completes them, as it does smaller ones), but
 * one release a GRACE_RETRY_NS still does, so that a program that starts
 * re-registering is seen; any revival in the class starts its count again.
 * (A trial is per time, not per count: each wasted grace costs the program
 * fresh pages for its next buffers, about 3 ms for 1 MiB on a VM.) The
 * grace is an optimization (G4: a re-register *may* revive); no guarantee
 * rests on it. */
#define GRACE_WASTED_MAX 2
#define GRACE_RETRY_NS 1000000000ull

static unsigned size_class(size_t n) { return n ? 63u - (unsigned)__builtin_clzll(n) : 0; }

/* Lock held. 1 if a release of this size (one the grace applies to) gets
 * its grace. */
int sp_reaper_grace_wanted(size_t size)
{
    unsigned c = size_class(size);
    if (sp_rp.grace_wasted[c] < GRACE_WASTED_MAX)
        return 1;
    uint64_t now = sp_now_ns();
    if (now < sp_rp.grace_retry_ns[c])
        return 0;
    sp_rp.grace_retry_ns[c] = now + GRACE_RETRY_NS; /* a trial */
    return 1;
}

/* Lock held. r's grace was ended by a free of its memory. */
static void grace_wasted(const sp_range *r)
{
    unsigned c = size_class(r->size);
    if (sp_rp.grace_wasted[c] < UCHAR_MAX)
        sp_rp.grace_wasted[c]++;
    if (sp_rp.grace_wasted[c] == GRACE_WASTED_MAX)
        sp_rp.grace_retry_ns[c] = sp_now_ns() + GRACE_RETRY_NS;
}

void sp_reaper_grace_forget(void)
{
    memset(sp_rp.grace_wasted, 0, sizeof(sp_rp.grace_wasted));
    memset(sp_rp.grace_retry_ns, 0, sizeof(sp_rp.grace_retry_ns));
}

int sp_reaper_release_graced(const sp_range *r) { return sp_reaper_grace_applies(r); }

/* ---- the revive grace --------------------------------------------------- *
 * A release whose device work is known done (the ordered caller's wait, or
 * the reaper's markers) waits out its grace on sp_rp.grace, off the queue, so
 * that neither the reaper nor anyone else waits meanwhile. It leaves when an
 * identical re-register revives it (sp_reaper_revive), when the program
 * frees its memory or when the grace ends; the reaper releases it then.
 * (The freeing thread does not: a real unregister that waits for the
 * whole device would make free() wait for work another thread enqueued,
 * a host function that waits for a lock the freeing thread holds, where
 * a free without safepin never waits.) */

/* Lock held. */
void sp_reaper_grace_enter(sp_range *r)
{
    sp_rel(r)->in_grace = 1;
    sp_rel(r)->graced = 1;
    SP_COUNT(graces);
    sp_rel(r)->next = sp_rp.grace;
    sp_rp.grace = r;
    sp_reaper_poke(); /* the reaper ends the grace */
}

/* Lock held. */
static void grace_unlink(sp_range *r)
{
    for (sp_range **pp = &sp_rp.grace; *pp; pp = &sp_rel(*pp)->next)
        if (*pp == r) {
            *pp = sp_rel(r)->next;
            break;
        }
    sp_rel(r)->in_grace = 0;
    sp_rel(r)->next = NULL;
}

/* Lock held. r's grace is over: freed, timed out, or the reaper is told
 * to stop. */
static int grace_over(const sp_range *r, uint64_t now)
{
    return r->freed || sp_rp.stop || now >= sp_reaper_grace_deadline(r);
}

/* Lock held. When the reaper must next look at the grace list: 0 if it is
 * empty, else the earliest end (now or earlier: at once). */
uint64_t sp_reaper_grace_next_ns(void)
{
    uint64_t next = 0, now = 0;
    for (sp_range *r = sp_rp.grace; r; r = sp_rel(r)->next) {
        if (!now)
            now = sp_now_ns();
        uint64_t t = grace_over(r, now) ? now : sp_reaper_grace_deadline(r);
        if (!next || t < next)
            next = t;
    }
    return next;
}

int sp_reaper_grace_due(void)
{
    uint64_t t = sp_reaper_grace_next_ns();
    return t && t <= sp_now_ns();
}

/* Lock held. Ranges whose grace is over go on the queue: the reaper's
 * markers (and, where the runtime's unregister stalls the device, the
 * hold) come before their real unregister, as for any release. */
void sp_reaper_grace_expire(void)
{
    uint64_t now = sp_now_ns();
    for (sp_range *r = sp_rp.grace, *next; r; r = next) {
        next = sp_rel(r)->next;
        if (grace_over(r, now)) {
            grace_unlink(r);
            sp_reaper_enqueue(r);
        }
    }
}

int sp_reaper_revive(sp_range *r)
{
    if (r->state != SP_RANGE_RELEASING || r->unregistering || r->freed)
        return 0;
    if (sp_rel(r)->in_grace)
        grace_unlink(r);
    sp_rel(r)->graced = 0; /* a later release has a grace of its own */
    sp_rp.grace_wasted[size_class(r->size)] = 0; /* its size is re-registered */
    r->state = SP_RANGE_LIVE;
    r->nest = 1;
    r->t_unregister_ns = 0;
    sp_rp.n_releasing--;
    SP_COUNT(releases_cancelled);
    /* A queued range is dropped from the queue lazily: the reaper skips
     * ranges that are LIVE again. Actions that waited only for it are ready
     * now; the reaper runs them. */
    if (sp_actions_settle(r))
        sp_lock_broadcast();
    return 1;
}

void sp_reaper_note_freed(const sp_range *r)
{
    if (!sp_rel(r)->in_grace)
        return;
    grace_wasted(r);
    if (sp_rp.idle)
        __atomic_store_n(&sp_rp.need_wake, 1, __ATOMIC_RELAXED); /* its grace is over */
}
