/*
 * waits.c - waits for the reaper: the kick that wakes it, a waiter's wait
 * for its progress (starting it, or doing its work when no thread can
 * start), the backlog's bound, a range's release, and the drains (at
 * exit, before a fork, for tests).
 */
#include "reaper.h"
#include "reaper_internal.h"
#include "diag.h"
#include "hold.h"
#include "options.h"

#include <errno.h>

/* ---- waits for the reaper ------------------------------------------------ */

void sp_reaper_wait_backlog(void)
{
    long max = sp_opt.max_pending;
    if (max <= 0 || (long)sp_rp.n_releasing <= max)
        return;
    SP_COUNT(waits_for_release);
    while ((long)sp_rp.n_releasing > max && sp_rp.started && !sp_rp.stop &&
           !sp_rp.capture_blocked && !sp_rp.abandoned)
        sp_reaper_wait_progress();
}

void sp_reaper_kick(void)
{
    if (__atomic_load_n(&sp_rp.need_wake, __ATOMIC_RELAXED) &&
        __atomic_exchange_n(&sp_rp.need_wake, 0, __ATOMIC_RELAXED))
        sp_lock_broadcast();
}

/* Lock held: before waiting for the reaper, make sure it is awake. */
static void kick_locked(void)
{
    if (__atomic_exchange_n(&sp_rp.need_wake, 0, __ATOMIC_RELAXED))
        sp_lock_broadcast();
}

/* Lock held. Wait for the reaper to make progress. Without a reaper thread
 * (it could not be started: out of threads), starting it is tried again,
 * and failing that the waiter does the reaper's work itself. */
void sp_reaper_wait_progress(void)
{
    kick_locked();
    if (!sp_rp.started && !sp_rp.stop && !sp_rp.abandoned) {
        sp_reaper_thread_start();
        if (!sp_rp.started && !sp_rp.inline_running) {
            sp_reaper_run_inline();
            return;
        }
    }
    sp_lock_wait();
}

void sp_reaper_wait_range(uintptr_t base, uint64_t id)
{
    sp_range *r;
    sp_hold_need(1); /* a held release is needed now */
    while ((r = sp_reg_find(base)) && r->id == id && r->state == SP_RANGE_RELEASING)
        sp_reaper_wait_progress();
    sp_hold_need(-1);
}

int sp_reaper_wait_range_unless_capture(uintptr_t base, uint64_t id)
{
    sp_range *r;
    int left = 0;
    sp_hold_need(1); /* a held release is needed now */
    while ((r = sp_reg_find(base)) && r->id == id && r->state == SP_RANGE_RELEASING) {
        if (sp_rp.capture_blocked) {
            left = -1;
            break;
        }
        sp_reaper_wait_progress();
    }
    sp_hold_need(-1);
    return left;
}

/* ---- drains -------------------------------------------------------------- */

/* A release submitted up to seq (sp_reaper_release numbers them) that has
 * not completed. sp_reg_for_each callback. Lock held. */
static int pending_upto(sp_range *r, void *seq)
{
    return r->state == SP_RANGE_RELEASING && sp_rel(r)->seq <= *(const uint64_t *)seq;
}

/* Wait for the pending work (upto > 0: only the releases submitted up to
 * that number, so that other threads' new ones cannot keep it waiting);
 * gives up at the deadline, at once when nowait, or when the work waits
 * for a stream capture to end. */
static size_t drain_upto(long timeout_ms, int nowait, uint64_t upto, sp_drain_end *why)
{
    sp_lock();
    uint64_t deadline = sp_now_ns() + (uint64_t)timeout_ms * 1000000ull;
    sp_hold_need(1); /* held releases go now */
    kick_locked();
    sp_drain_end end = SP_DRAIN_DONE;
    for (;;) {
        int work = upto ? sp_reg_for_each(pending_upto, &upto)
                        : sp_rp.n_releasing > 0 || sp_actions_calls() || sp_rp.idle_running ||
                              sp_actions_any_ready() || sp_reaper_streams_work();
        if (!work)
            break;
        if (!sp_rp.started && !sp_rp.inline_running && !nowait && !sp_rp.abandoned) {
            sp_reaper_thread_start();
            if (!sp_rp.started) {
                /* No reaper thread: the drain does its work itself. */
                sp_reaper_run_inline();
                if (sp_now_ns() >= deadline) {
                    end = SP_DRAIN_TIMEOUT;
                    break;
                }
                sp_lock_timedwait_ns(sp_now_ns() + 1000000ull);
                continue;
            }
        }
        if (nowait) {
            end = SP_DRAIN_HOST_FUNCTION;
            break;
        }
        if (sp_rp.capture_blocked) {
            end = SP_DRAIN_CAPTURE;
            break;
        }
        if (!sp_rp.started && !sp_rp.inline_running)
            break; /* abandoned: nothing will run it */
        if (sp_lock_timedwait_ns(deadline) == ETIMEDOUT) {
            end = SP_DRAIN_TIMEOUT;
            break;
        }
    }
    size_t left = sp_rp.n_releasing;
    sp_hold_need(-1);
    sp_unlock();
    *why = end;
    return left;
}

static size_t drain(long timeout_ms, int nowait, sp_drain_end *why)
{
    return drain_upto(timeout_ms, nowait, 0, why);
}

size_t sp_reaper_drain(long timeout_ms)
{
    sp_drain_end why;
    return drain(timeout_ms, 0, &why);
}

size_t sp_reaper_exit_drain(long timeout_ms, int nowait, sp_drain_end *why)
{
    size_t left = drain(timeout_ms, nowait, why);
    sp_lock();
    sp_rp.exiting = 1;
    sp_reaper_join_ended();
    if (*why != SP_DRAIN_DONE) {
        /* What is left cannot complete before the process ends: the reaper
         * makes no further call for it (the runtime is torn down next). */
        __atomic_store_n(&sp_rp.abandoned, 1, __ATOMIC_RELEASE);
        sp_rp.stop = 1;
        sp_lock_broadcast();
    }
    sp_unlock();
    return left;
}

size_t sp_reaper_fork_drain(long timeout_ms, int nowait, uint64_t upto)
{
    sp_drain_end why;
    if (!upto) {
        sp_lock();
        upto = sp_rp.submit_seq;
        sp_unlock();
    }
    return upto ? drain_upto(timeout_ms, nowait, upto, &why) : 0;
}
