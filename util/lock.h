/*
 * lock.h - safepin's one process lock: a mutex and a condition variable.
 *
 * One lock, so that no order between locks can deadlock and every state
 * change can wake every waiter (one condvar, broadcast). It guards:
 *   - registry/: every range and every field of sp_range, the op list, and
 *     the writes of the lock-free filter (read without it: sp_reg_maybe);
 *   - reaper/: the release queue and batches, deferred actions and calls,
 *     the reaper thread's state (R);
 *   - streams/: the stream list, events and marker sets, captures;
 *   - a face's table of real functions where it is filled or emptied
 *     after start-up (hip/hip_face.c, interpose/dlclose.c), and
 *     interpose/dlclose.c's references to a runtime library;
 *   - diag/options.h: sp_opt, where tests change it while threads run.
 * Not by it: the counters (sp_stat, atomic), the history ring (lock-free),
 * the symbolizer's own locks, diag's log.
 *
 * Functions say "lock held" where they must be called with it held. A
 * thread holding it cannot be cancelled (its cancellation acts after it
 * unlocks). Dependencies: libc and pthreads only.
 */
#ifndef SAFEPIN_LOCK_H
#define SAFEPIN_LOCK_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void sp_lock(void);
void sp_unlock(void);

/* 1 if the calling thread holds the lock (the memory hooks then pass
 * through: it is safepin's own code, or the runtime called under it).
 * Inlined into the memory hooks; initial-exec TLS, so no __tls_get_addr
 * call (a sanitizer runtime may intercept that before it is initialized). */
extern __thread int sp_lock_tls_held __attribute__((tls_model("initial-exec")));
__attribute__((no_sanitize_address)) static inline int sp_lock_held(void)
{
    return sp_lock_tls_held;
}

/* The condition variable, broadcast whenever guarded state changes (a range
 * changes state or is removed, an op ends, a release completes, ...). */
void sp_lock_wait(void);                        /* lock held; waits */
int sp_lock_timedwait_ns(uint64_t abs_monotonic_ns); /* lock held; 0 or ETIMEDOUT */
void sp_lock_broadcast(void);                   /* lock held or not */

/* fork, in the child (pthread_atfork), first of safepin's handlers: the
 * lock, not held. held: this thread took it in the prepare handler (then
 * no other thread held it at the fork); otherwise a fresh lock. */
void sp_lock_fork_child(int held);

#ifdef __cplusplus
}
#endif
#endif
