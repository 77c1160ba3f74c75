/*
 * reaper.h - stream-ordered, deferred releases and the thread that runs them.
 *
 * A release is a registry range in state RELEASING. The reaper takes every
 * queued release as one batch, records one marker (event) on each stream that
 * may have used them - the null stream of each device used (it covers every
 * blocking stream) and each live non-blocking stream - in relaxed capture
 * mode, never on a capturing stream (it waits for the capture's end), waits
 * for the markers without spinning, then runs the runtime's real unregister
 * of each range, then the deferred actions (free, munmap) that waited on it,
 * and removes the range. The reaper never runs inside a host function.
 *
 * Everything here is serialized by sp_lock (util/lock.h). Calls marked "lock
 * held" must be made with it held. Dependencies: streams/, runtime/, diag/,
 * registry/, util/. Callers: core/, interpose/.
 */
#ifndef SAFEPIN_REAPER_H
#define SAFEPIN_REAPER_H

#include <stddef.h>
#include <stdint.h>

#include "registry.h"
#include "streams.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Start a release of r (LIVE -> RELEASING), starting the reaper on first
 * use. Lock held. Never fails. The reaper is woken by sp_reaper_kick(),
 * which the caller calls after unlocking (so the unregister call does not
 * pay for a wake-up made while holding the lock), or by any wait below. */
void sp_reaper_release(sp_range *r);

/* An ordered unregister: r's release starts (as sp_reaper_release) but is
 * not queued: the caller waits for the device work enqueued before its
 * call (sp_wait_prior_work), then completes the release itself, in its own
 * thread, as the runtime's own unregister would, so the memory is the
 * program's again when the call returns and the reaper never waits on the
 * device while the program goes on. Returns the release's sequence. Lock
 * held. */
uint64_t sp_reaper_release_ordered(sp_range *r);
/* After that wait: covered 1 when a marker set taken after the release
 * started has completed (it covers every operation enqueued before the
 * call), or the runtime's own unregister covers it. Completes the release
 * (1; 2 if the real unregister failed, its answer in *real) unless r was revived or released
 * again meanwhile, or it waits out a revive grace (only if grace_ok); not
 * covered, it is queued for the reaper instead. Lock held (released around
 * the real unregister). */
int sp_reaper_release_here(uintptr_t base, uint64_t id, uint64_t seq, int covered, int grace_ok,
                           int *real);
/* 1 if r's release (started) keeps a revive grace once its device work is
 * done: the real unregister waits for the grace. Lock held. */
int sp_reaper_release_graced(const sp_range *r);

/* Wake the reaper if work was queued while it slept. No lock needed. */
void sp_reaper_kick(void);

/* Revive a RELEASING range whose real unregister has not started: it is LIVE
 * again with nest 1 and its release is dropped. Lock held. Returns 1 if
 * revived, 0 if it can't be (unregistering, freed). */
int sp_reaper_revive(sp_range *r);

/* Wait until the range with this base and id is no longer RELEASING (its
 * release completed, or it was revived). Lock held (released while waiting). */
void sp_reaper_wait_range(uintptr_t base, uint64_t id);
/* The same (a held release is let go), for a caller whose wait a capture
 * could make endless (its own, or another thread's that waits on it): -1,
 * without waiting further, once the reaper waits for a capture to end. */
int sp_reaper_wait_range_unless_capture(uintptr_t base, uint64_t id);

/* ---- deferred actions (G2) ------------------------------------------------
 * A deferred action (free of a block, munmap of pages) runs on the reaper
 * once no release it waits for is pending: the ranges overlapping its span
 * that were RELEASING (or released later, before it ran) and existed when
 * it was deferred. The caller saw success already. A device free from a host
 * function (defer_free_in_host_fn) is deferred to the reaper thread by
 * sp_reaper_defer_call_rt. */
typedef enum sp_act_kind { SP_ACT_FREE, SP_ACT_MUNMAP, SP_ACT_DEVFREE } sp_act_kind;

/* For memory the program frees, unmaps or replaces: a LIVE r is released
 * (freed-while-registered is the caller's to report) and r is marked freed
 * (never revived). Lock held. */
void sp_reaper_claim(sp_range *r);

/* Wait while a range overlapping [addr, addr+len) is being registered.
 * Lock held (released while waiting). */
void sp_reaper_wait_registering(uintptr_t addr, size_t len);

/* Defer free(p) of the block [p, p+len) while a release overlapping it is
 * pending. Lock held. 1 if deferred; 0 if nothing is pending there (the
 * caller frees it now). Out of memory: waits for those releases and returns
 * 0 if may_wait, else keeps the block (a leak, never an early free) and
 * returns 1. */
int sp_reaper_defer_free(void *p, size_t len, int may_wait);

/* munmap of the page-aligned [addr, addr+len), whose ranges the caller has
 * claimed: the pages of the registrations there (page-rounded) are unmapped
 * once their releases have completed, every other page now; pages whose
 * unmap is already deferred stay as they are. Lock held. Out of memory: as
 * sp_reaper_defer_free (waits, or leaves those pages mapped). */
void sp_reaper_defer_unmap(uintptr_t addr, size_t len, int may_wait);

/* 1 if a release not yet completed, or a deferred action, overlaps
 * [addr, addr+len). Lock held. */
int sp_reaper_pending_overlaps(uintptr_t addr, size_t len);

/* Wait until nothing is pending over [addr, addr+len) (see above). Lock held
 * (released while waiting). Never from a host function (G8): the releases
 * may wait for it. */
void sp_reaper_wait_pending(uintptr_t addr, size_t len);

/* Where waiting is impossible (a host function): the deferred unmaps within
 * [addr, addr+len) run now, and leave the deferred list. Lock held. */
void sp_reaper_unmap_now(uintptr_t addr, size_t len);

/* Defer a call that must not run in a host function (runtime rt's device
 * free, made in place) to the reaper thread. Lock held. Returns 0 or -1 if
 * out of memory. */
int sp_reaper_defer_call_rt(sp_act_kind kind, int rt, void *place, void *addr);

/* At start-up, before the program runs (interpose/init.c): maps the
 * reaper's stack, the one place its thread ever uses (thread.c, "the
 * thread's life"). Without it the thread gets a stack of glibc's. */
void sp_reaper_init(void);

/* Lock held. Start the reaper thread if it is not running: at the first
 * registration (core/), so that it runs before any memory hook needs it. */
void sp_reaper_start(void);

/* The calling thread enters (1) or leaves (0) a hook of the program's
 * memory calls: no thread of safepin's starts there (DESIGN G12); a start
 * wanted meanwhile waits for the next runtime hook, and a wait for the
 * reaper does its work on the calling thread. Lock held or not. */
void sp_reaper_mem_hook(int enter);

/* Start the reaper if needed and make sure it looks for work (streams.c
 * handed it a destroy). Lock held; call sp_reaper_kick after unlocking. */
void sp_reaper_poke(void);

/* Ordered unregister: wait, on the calling thread, until the device work
 * enqueued before now has completed (queries first: microseconds when it
 * has). Returns at once where a capture makes the runtime refuse a marker.
 * Lock NOT held. Returns 1 if it waited for everything, 0 if it could not.
 * base: the range it is for (its diagnostics name it), or 0. */
int sp_wait_prior_work(uintptr_t base);

/* 1 if a range with this base was released recently (double-unregister
 * rather than unregister-unknown). Lock held. */
int sp_reaper_recently_released(uintptr_t base);
/* The newest of the last releases (64) with this base, as a diagnostic
 * names it: its size, runtime and stacks (valid while the lock is held).
 * 0 if none. Lock held. */
struct sp_diag_range;
int sp_reaper_released_view(uintptr_t base, struct sp_diag_range *out);

/* A range released because the program freed or unmapped it while it was
 * registered (freed-while-registered) owes the program's own unregister of
 * its base: without safepin the runtime kept that stale registration, and
 * answers that unregister with success. owe: base owes one (up to 3072
 * bases at once). take: 1 (and forgotten) if base owes one; also taken
 * when a new registration at base succeeds (nothing is owed there any
 * more). Lock held. */
int sp_reaper_take_owed(uintptr_t base);
void sp_reaper_owe(uintptr_t base);

/* Forget which sizes' revive graces were wasted (grace.c, "which sizes
 * get a grace"): each size gets its grace again. Lock held. For tests. */
void sp_reaper_grace_forget(void);

/* Wait up to timeout_ms for every pending release and deferred call.
 * Takes the lock. Returns the number of releases left. */
size_t sp_reaper_drain(long timeout_ms);

/* Why the exit drain ended. */
typedef enum sp_drain_end {
    SP_DRAIN_DONE,          /* nothing left */
    SP_DRAIN_TIMEOUT,       /* timeout_ms passed */
    SP_DRAIN_HOST_FUNCTION, /* exit from a host function: the work waits behind it */
    SP_DRAIN_CAPTURE,       /* the work waits for a stream capture still open */
} sp_drain_end;

/* The exit drain: like sp_reaper_drain, but it never waits for what cannot
 * complete: at once when nowait (exit was called from a host function, so
 * markers queued behind it never run), and not for releases held back by a
 * stream capture (a capture open at exit never ends). Unless it ends DONE,
 * the reaper then makes no further runtime call for the work left (the
 * runtime is torn down next). Takes the lock. Returns the releases left. */
size_t sp_reaper_exit_drain(long timeout_ms, int nowait, sp_drain_end *why);

/* The reaper's lifetime. main ended with pthread_exit: from now on the
 * reaper ends whenever it has no work (a new one starts with the next
 * release), so it never keeps the process alive. Takes the lock. */
void sp_reaper_main_gone(void);

/* 1 while safepin holds work for the runtime: ranges (live or releasing),
 * queued or running releases and deferred calls, streams' work (events to
 * destroy, destroys handed over). Tail markers alone are not: once the
 * runtime is unloaded they are forgotten with it. Lock held. */
int sp_reaper_busy(void);

/* Run fn once the reaper has no work (sp_reaper_busy() == 0), on the reaper
 * thread, lock not held; starts the reaper. Lock held. */
void sp_reaper_when_idle(void (*fn)(void));

/* The runtime was unloaded: forget its streams, devices and markers; the
 * reaper sets its capture mode again in the next runtime. Lock held. */
void sp_reaper_runtime_gone(void);

/* Backpressure: while more than max_pending releases are pending, wait for
 * the reaper (not while a capture holds the releases back, nor without a
 * reaper). Lock held; the caller may wait (not in a host function, not
 * during its own capture). */
void sp_reaper_wait_backlog(void);

/* safepin's table sizes (tests/soak checks that they stay flat). Takes the
 * lock. */
typedef struct sp_table_sizes {
    size_t ranges;     /* registry: live + releasing */
    size_t releasing;  /* releases not completed */
    size_t actions;    /* deferred frees, unmaps, calls */
    size_t streams;    /* streams tracked */
    size_t orphans;    /* tail markers of destroyed streams */
} sp_table_sizes;
void sp_reaper_table_sizes(sp_table_sizes *t);

/* fork() itself, before any fork handler runs: completes the releases left
 * pending at the call (their prior device work done, held ones too; not
 * those other threads start meanwhile) within timeout_ms,
 * so that the child inherits the runtime state a bare run would leave (G9).
 * Never waits for releases a stream capture holds back; at once when nowait
 * (a host function: the work may wait behind it). Takes the lock. Returns
 * the releases left. */
size_t sp_reaper_fork_drain(long timeout_ms, int nowait, uint64_t upto);

/* The sequence of the last release this thread started, 0 if none (a
 * fork's prepare handlers: did the program's handler start one? Another
 * thread's, racing with the fork, are left as a bare run leaves them; the
 * runtime's own prepare handler may hold its lock by then). No lock needed. */
uint64_t sp_reaper_submitted(void);

/* Fork handler (after the registry's): the child carries out the frees and
 * unmaps its parent deferred (see actions.c), forgets the reaper and the
 * streams; a new reaper starts on first use. consistent: the parent held
 * the lock across the fork. */
void sp_reaper_fork_child(int consistent);

#ifdef __cplusplus
}
#endif
#endif
