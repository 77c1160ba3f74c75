/*
 * lock.c - safepin's one process lock and its condition variable (see
 * lock.h for what it guards).
 */
#include "lock.h"
#include "forkwatch.h"

#include <errno.h>
#include <pthread.h>
#include <time.h>

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cond;

/* Whether this thread holds the lock: the memory hooks must not take it
 * again when code run under it (a diagnostic, the runtime) frees memory. */
__thread int sp_lock_tls_held __attribute__((tls_model("initial-exec")));

/* The caller's cancelability state, saved while it holds the lock. */
static __thread int tls_cancel_state __attribute__((tls_model("initial-exec")));

/* The condvar waits on CLOCK_MONOTONIC (sp_lock_timedwait_ns). */
static void init_lock(void)
{
    pthread_condattr_t attr;

    pthread_mutex_init(&g_lock, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&g_cond, &attr);
    pthread_condattr_destroy(&attr);
}

static void lock_once(void)
{
    pthread_once(&g_once, init_lock);
}

/* A child of a fork no handler of safepin's saw (forkwatch.h): whether the
 * lock was free at the fork decides what the child may keep of its
 * parent's state; the recovery runs before this thread takes it. */
__attribute__((noinline)) static void lock_fork_unseen(void)
{
    int was_free = pthread_mutex_trylock(&g_lock) == 0;
    if (was_free)
        pthread_mutex_unlock(&g_lock);
    sp_forkwatch_recover(was_free);
}

/* Takes the mutex (initializing it on first use). Not recursive.
 * Cancellation is disabled while the lock is held: no cancellation point
 * reached under it (the condvar waits, a diagnostic's write, the symbolizer)
 * can end the thread with the lock taken. A pending cancellation acts at the
 * caller's next cancellation point after sp_unlock. */
void sp_lock(void)
{
    int old;

    if (__builtin_expect(sp_forkwatch_unseen(), 0))
        lock_fork_unseen();
    lock_once();
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
    /* Set before taking the mutex, cleared after releasing it: a signal
     * handler that interrupts this thread anywhere between the two (even
     * half-way through pthread_mutex_lock, when the mutex may already be
     * ours) sees that it must not take the lock or wait on it (exit() from
     * a handler, interpose/init.c). The compiler barriers keep the store in
     * place. */
    sp_lock_tls_held = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    pthread_mutex_lock(&g_lock);
    tls_cancel_state = old;
}

/* Releases the mutex and restores the caller's cancelability. */
void sp_unlock(void)
{
    int old = tls_cancel_state;

    pthread_mutex_unlock(&g_lock);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    sp_lock_tls_held = 0;
    pthread_setcancelstate(old, NULL);
}

/* Lock held. Waits for a broadcast (or a spurious wakeup): callers loop on
 * their condition. The lock is released while waiting; the thread cannot be
 * cancelled here (see sp_lock). */
void sp_lock_wait(void)
{
    pthread_cond_wait(&g_cond, &g_lock);
}

/* Lock held. Like sp_lock_wait, but gives up at abs_monotonic_ns
 * (CLOCK_MONOTONIC). Returns 0 on a wakeup, ETIMEDOUT once the time has
 * passed. */
int sp_lock_timedwait_ns(uint64_t abs_monotonic_ns)
{
    struct timespec ts;
    int rc;

    ts.tv_sec = (time_t)(abs_monotonic_ns / 1000000000u);
    ts.tv_nsec = (long)(abs_monotonic_ns % 1000000000u);
    rc = pthread_cond_timedwait(&g_cond, &g_lock, &ts);
    return rc == ETIMEDOUT ? ETIMEDOUT : 0;
}

/* Wakes every waiter. Lock held or not. */
void sp_lock_broadcast(void)
{
    lock_once();
    /* Marked as held meanwhile: exit() from a signal handler that interrupts
     * the broadcast must not touch the condition variable (its internal
     * lock is this thread's), so the exit drain is skipped there. */
    int was = sp_lock_tls_held;
    sp_lock_tls_held = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    pthread_cond_broadcast(&g_cond);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    sp_lock_tls_held = was;
}

/* The parent's threads are gone. held: this thread took the lock in the
 * fork's prepare handler, so no other thread held it at the fork: it is
 * released as the parent releases it. Otherwise another thread may have
 * held it: a fresh mutex. The condvar is fresh either way (the parent's
 * waiters are counted in it, and a broadcast would wait for them). */
void sp_lock_fork_child(int held)
{
    pthread_condattr_t attr;

    if (!held) {
        init_lock();
        sp_lock_tls_held = 0;
        return;
    }
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&g_cond, &attr);
    pthread_condattr_destroy(&attr);
    sp_unlock();
}
