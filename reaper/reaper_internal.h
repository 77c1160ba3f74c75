/*
 * reaper_internal.h - shared by the files of reaper/ only: the reaper's
 * state, its part of each range, and the helpers each file uses of
 * another's. Lock held unless said otherwise.
 *   reaper.c   releases started, queued and taken as batches: the device
 *              work waited for, the real unregister that completes each
 *   grace.c    the revive grace: which sizes get one, the ranges in it, a
 *              revive
 *   thread.c   the thread's life: its stack, its start, its loop, its end
 *   waits.c    waits for the reaper: its progress, a range's release, the
 *              drains
 *   graves.c   what is remembered of completed releases, and the bases
 *              owed one unregister
 *   actions.c  the deferred actions, as the reaper runs them
 *   hold.c     the release hold (hold.h)
 * The small helpers a program's thread runs in its hooks (the reaper's
 * part of a range, the queue, the grace's predicates) are inline here, so
 * that the files' split adds no call to a hook's stack.
 */
#ifndef SAFEPIN_REAPER_INTERNAL_H
#define SAFEPIN_REAPER_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "options.h"
#include "registry.h"
#include "streams.h"
#include "util.h"

/* The reaper's part of a range (sp_range.part, after the diagnostics'):
 * its place in the release queue. */
typedef struct sp_release {
    sp_range *next;         /* next range in the queue */
    uint64_t seq;           /* submission sequence of its current release */
    unsigned queued : 1;    /* on the queue */
    unsigned in_batch : 1;  /* taken by the reaper, markers being waited on */
    unsigned waiting : 1;   /* an ordered unregister waits for the work before it
                               and completes the release itself (not queued) */
    unsigned in_grace : 1;  /* in its revive grace, its work done: on sp_rp.grace
                               (linked by next, as it is on no queue) */
    unsigned graced : 1;    /* this release had its grace */
    unsigned no_grace : 1;  /* its size's graces were wasted: none (sp_reaper_grace_wanted) */
} sp_release;

#define RELEASE_PART ((SP_SITES_PART_END + 7) & ~(size_t)7)
_Static_assert(RELEASE_PART + sizeof(sp_release) <= SP_REG_PART_ROOM,
               "the registry's room per range holds the sites and the reaper's part");

static inline sp_release *sp_rel(const sp_range *r) { return sp_reg_part(r, RELEASE_PART); }

#define SP_GRAVEYARD 1024
/* The most recent releases keep their stacks (where registered, where
 * unregistered or freed) for a double unregister's diagnostic. */
#define SP_GRAVE_SITES 64
typedef struct sp_grave {
    uintptr_t base;
    size_t size;
    int rt;
    sp_site *reg, *unreg;
} sp_grave;

/* The reaper's state. Guarded by sp_lock (util/lock.h). */
struct sp_reaper_state {
    sp_range *q_head, *q_tail;
    sp_range *grace;  /* ranges in their revive grace (see sp_reaper_grace_enter) */
    int started, stop;
    int idle;         /* the reaper sleeps waiting for work */
    int need_wake;    /* work queued while it slept; sp_reaper_kick wakes it */
    int idle_running; /* idle_fn runs (the exit drain waits for it) */
    int capture_blocked; /* the reaper waits for a capture to end */
    int main_gone;    /* main ended (pthread_exit, or its thread exited): end when idle */
    uint64_t leader_checked; /* when leader_gone last looked (monotonic ns) */
    int exe_ok;       /* /proc/self/exe was readable when the reaper started */
    int exiting;      /* the exit drain ran: no idle work any more */
    int abandoned;    /* exit gave up on the pending work: no more calls */
    int inline_running; /* no reaper thread could start: a waiter does its work */
    int start_wanted; /* a start was wanted inside a memory hook */
    int ended;        /* it ended idle (main gone): join it before the next start */
    int warm;         /* the started thread has made its first allocations */
    unsigned rt_gen;  /* bumped when the runtime was unloaded */
    void (*idle_fn)(void); /* run once the reaper has no work (lock not held) */
    pthread_t thread;
    uint64_t submit_seq;
    size_t n_releasing;
    uintptr_t graveyard[SP_GRAVEYARD];
    unsigned grave_i;
    sp_grave graves[SP_GRAVE_SITES];
    unsigned graves_i;
    unsigned char grace_wasted[64]; /* by size class: graces ended by a free, in a row */
    uint64_t grace_retry_ns[64];    /* by size class: when a skipped class may try again */
};
extern struct sp_reaper_state sp_rp;

/* reaper.c: the queue. */
static inline void sp_reaper_enqueue(sp_range *r)
{
    sp_rel(r)->next = NULL;
    sp_rel(r)->queued = 1;
    if (sp_rp.q_tail)
        sp_rel(sp_rp.q_tail)->next = r;
    else
        sp_rp.q_head = r;
    sp_rp.q_tail = r;
}

/* grace.c's predicates, inline: an ordered unregister asks them on the
 * program's thread (sp_reaper_release_here). */

/* Lock held. 1 if r's release waits a grace for an identical re-register:
 * large ranges are expensive to pin again. */
static inline int sp_reaper_grace_applies(const sp_range *r)
{
    return sp_opt.revive && sp_opt.revive_grace_us > 0 && !r->freed && !sp_rel(r)->graced &&
           !sp_rel(r)->no_grace && r->size >= (size_t)sp_opt.revive_grace_bytes;
}

static inline uint64_t sp_reaper_grace_deadline(const sp_range *r)
{
    return r->t_unregister_ns + (uint64_t)sp_opt.revive_grace_us * 1000ull;
}

/* Lock held. r's release waits a grace, and some of it is left. */
static inline int sp_reaper_grace_left(const sp_range *r)
{
    return sp_reaper_grace_applies(r) && !sp_rp.stop &&
           sp_now_ns() < sp_reaper_grace_deadline(r);
}

/* Lock held. Streams' work for the reaper, unless the exit drain ran. */
static inline int sp_reaper_streams_work(void) { return !sp_rp.exiting && sp_streams_has_work(); }

/* reaper.c: batches. Lock held (released while waiting). One batch: take
 * it, wait for the device work enqueued before it, release it; 1 if exit
 * gave up on the work meanwhile. Finishing a batch whose markers have
 * completed (mark_seq: the last release they cover) releases each range. */
int sp_reaper_release_batch(void);
void sp_reaper_finish_batch(sp_range *batch, uint64_t mark_seq);

/* grace.c: the revive grace. Whether a release of this size gets its
 * grace; r enters its grace; when the reaper must next look at the ranges
 * in their grace (0: none), whether one is due now; those whose grace is
 * over go on the queue. */
int sp_reaper_grace_wanted(size_t size);
void sp_reaper_grace_enter(sp_range *r);
uint64_t sp_reaper_grace_next_ns(void);
int sp_reaper_grace_due(void);
void sp_reaper_grace_expire(void);

/* grace.c: r (claimed) was freed: if it is in its revive grace, the
 * grace is over (the reaper is woken by sp_reaper_kick). */
void sp_reaper_note_freed(const sp_range *r);

/* thread.c: the reaper thread started if it is not running (or noted, for
 * the next runtime hook, inside a memory hook); an ended reaper joined; no
 * thread could be started: the caller runs the reaper's loop until no work
 * is left. */
void sp_reaper_thread_start(void);
void sp_reaper_join_ended(void);
void sp_reaper_run_inline(void);

/* waits.c: wait for the reaper to make progress (starting it, or doing
 * its work here when no thread can be started). */
void sp_reaper_wait_progress(void);

/* actions.c: the actions over r whose releases are all done (r's release
 * completed, or r was revived) become ready; 1 if any did. */
int sp_actions_settle(const sp_range *r);
/* r's release failed: the actions waiting for it are dropped (its memory
 * may still be pinned: never freed or unmapped). */
void sp_actions_drop(const sp_range *r);
int sp_actions_any_ready(void);
/* Runs the ready ones (released while they run). */
void sp_actions_run_ready(void);
/* Deferred calls queued or running; run them, in the order they came
 * (released while they run). */
int sp_actions_calls(void);
void sp_actions_run_calls(void);
/* Anything deferred at all; how many (the soak's table sizes). */
int sp_actions_pending(void);
size_t sp_actions_count(void);
/* Fork child: carry out the ready ones (see actions.c), then forget all. */
void sp_actions_fork_child(int consistent);
void sp_actions_fork_reset(void);

#endif
