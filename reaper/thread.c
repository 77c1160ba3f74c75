/*
 * thread.c - the reaper thread's life: its stack, mapped at start-up; its
 * start (never inside a memory hook, signals blocked) and its first
 * allocations; its loop over the streams' work, the deferred actions, the
 * held releases and the batches; its idle waits and its end once the
 * program's main thread is gone; the loop run by a waiter when no thread
 * can start; a forked child forgetting it.
 */
#include "reaper.h"
#include "reaper_internal.h"
#include "api_error.h"
#include "diag.h"
#include "hold.h"
#include "runtime.h"
#include "streams.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static void *reaper_main(void *arg);

/* ---- the thread's life --------------------------------------------------- *
 * The reaper runs on a stack safepin maps once, at start-up
 * (sp_reaper_init), before the program runs: a place safepin chose and
 * keeps, never unmapped, so no start of the thread maps anything (glibc
 * puts the thread's descriptor and static TLS at the top of a stack it is
 * given). It starts at the first registration (sp_reaper_start, from a
 * runtime hook), never inside a hook of the program's memory calls (free,
 * munmap, fixed mmap, mremap, madvise, shmdt: sp_reaper_mem_hook): there a
 * start is only noted (start_wanted) and made at the next runtime hook,
 * and a memory hook that must wait meanwhile does the reaper's work itself
 * (sp_reaper_run_inline). Once the program's main thread has ended with
 * pthread_exit it ends whenever it has no work, so it never keeps the
 * process alive: the process ends with its last thread, and the exit drain
 * runs there. An ended reaper is joined before another starts on the same
 * stack. */
#define REAPER_STACK (8u << 20) /* glibc's default for a thread (RLIMIT_STACK 8 MiB) */

static struct {
    void *lo;     /* the usable stack, above its guard page; NULL: none mapped */
    size_t size;
} S;

/* Each thread's count of memory hooks it is inside (no thread starts there). */
static __thread int tls_mem_hook __attribute__((tls_model("initial-exec")));

void sp_reaper_init(void)
{
    if (S.lo)
        return;
    size_t page = sp_page_size();
    void *m = mmap(NULL, REAPER_STACK + page, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (m == MAP_FAILED)
        return; /* the reaper gets a stack of glibc's when it starts */
    if (mprotect((char *)m + page, REAPER_STACK, PROT_READ | PROT_WRITE) != 0) {
        munmap(m, REAPER_STACK + page);
        return;
    }
    S.lo = (char *)m + page;
    S.size = REAPER_STACK;
}

void sp_reaper_mem_hook(int enter) { tls_mem_hook += enter ? 1 : -1; }

void sp_reaper_thread_start(void)
{
    if (sp_rp.started)
        return;
    if (tls_mem_hook > 0) {
        sp_rp.start_wanted = 1; /* the next runtime hook starts it */
        return;
    }
    if (sp_rp.ended) {
        /* Its stack is free once it is joined; still on its way out: later. */
        if (pthread_tryjoin_np(sp_rp.thread, NULL) != 0) {
            sp_rp.start_wanted = 1;
            return;
        }
        sp_rp.ended = 0;
    }
    pthread_attr_t attr, *ap = NULL;
    char here;
    int on_it = S.lo && &here >= (char *)S.lo && &here < (char *)S.lo + S.size;
    if (S.lo && !on_it && pthread_attr_init(&attr) == 0) { /* on_it: a child forked by the reaper */
        ap = &attr;
        if (pthread_attr_setstack(&attr, S.lo, S.size) != 0) {
            pthread_attr_destroy(&attr);
            ap = NULL;
        }
    }
    sigset_t all, old;
    sigfillset(&all);
    sp_rp.warm = 0;
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = sp_test_fail(SP_TF_THREAD) ? EAGAIN
                                        : pthread_create(&sp_rp.thread, ap, reaper_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (ap)
        pthread_attr_destroy(ap);
    if (rc != 0) {
        sp_log(SP_LOG_ERROR, "runtime-error", "cannot start the reaper thread: %s", strerror(rc));
        return;
    }
    sp_rp.started = 1;
    sp_rp.start_wanted = 0;
    /* Its first allocations (the arenas and caches an allocator makes for a
     * new thread: mappings the kernel places) are made now, while the
     * program is in its runtime call, never later, when the program may
     * have just unmapped the place where they would land. Bounded. */
    uint64_t until = sp_now_ns() + 200000000ull;
    while (!sp_rp.warm && sp_now_ns() < until)
        sp_lock_timedwait_ns(until);
}

void sp_reaper_start(void)
{
    if (!sp_rp.stop && !sp_rp.abandoned)
        sp_reaper_thread_start();
}

/* Lock held. The process ends: an ended reaper is joined (never left
 * joinable). */
void sp_reaper_join_ended(void)
{
    if (sp_rp.ended && pthread_tryjoin_np(sp_rp.thread, NULL) == 0)
        sp_rp.ended = 0;
}

int sp_reaper_busy(void)
{
    return sp_reg_count() > 0 || sp_rp.q_head || sp_actions_pending() || sp_streams_has_work();
}

void sp_reaper_when_idle(void (*fn)(void))
{
    sp_rp.idle_fn = fn;
    sp_reaper_thread_start();
    sp_lock_broadcast();
}

void sp_reaper_main_gone(void)
{
    sp_lock();
    sp_rp.main_gone = 1;
    sp_lock_broadcast();
    sp_unlock();
}

void sp_reaper_runtime_gone(void)
{
    sp_streams_fork_child(); /* forgets every stream and event, as in a child */
    sp_rp.rt_gen++;
    sp_lock_broadcast();
}

/* ---- the thread --------------------------------------------------------- */

/* How often an idle reaper looks whether the program's main thread is
 * gone (leader_gone). */
#define LEADER_CHECK_NS 250000000ull

/* 1 if the process's first thread (its main thread, or the one a clone()
 * without CLONE_VM started) has exited, by any way: pthread_exit (also seen
 * by main_thread_ended), or a raw SYS_exit (a clone()'s function returning,
 * a program's syscall(SYS_exit)), which nothing can hook. The kernel stops
 * showing /proc/self/exe once that thread has exited (it reads the link
 * through the first thread's memory map): one readlink, no file descriptor,
 * a call every sandbox allows (the loader and libc make it). Looked at only
 * where /proc works (sp_rp.exe_ok, from the reaper's own
 * /proc/thread-self/exe), else the answer is 0. */
static int leader_gone(void)
{
    char buf[8];
    int saved = errno;
    long n = syscall(SYS_readlink, "/proc/self/exe", buf, sizeof(buf));
    int gone = n < 0 && errno == ENOENT;
    errno = saved;
    return gone && sp_rp.exe_ok;
}

/* Lock held. Waits for work; returns 1 when the reaper should end instead:
 * the program's main thread is gone and there is no work
 * (sp_reaper_thread_start). */
static int idle_wait(int inline_mode)
{
    while (!sp_rp.q_head && !sp_actions_calls() && !sp_reaper_streams_work() &&
           !sp_actions_any_ready() && !sp_rp.stop && !sp_hold_due() && !sp_reaper_grace_due()) {
        if (inline_mode)
            return 1; /* a waiter's turn ends when there is no work */
        if (sp_rp.idle_fn && !sp_rp.exiting && !sp_reaper_busy()) {
            void (*fn)(void) = sp_rp.idle_fn;
            sp_rp.idle_fn = NULL;
            sp_rp.idle_running = 1;
            sp_unlock();
            fn();
            sp_lock();
            sp_rp.idle_running = 0;
            sp_lock_broadcast();
            continue;
        }
        uint64_t grace = sp_reaper_grace_next_ns();
        uint64_t now = sp_now_ns();
        if (!sp_rp.main_gone && now - sp_rp.leader_checked >= LEADER_CHECK_NS) {
            /* A process whose last program thread has ended must end, as
             * it does bare: this thread would keep it alive, and it blocks
             * every signal (a SIGTERM would stay pending). */
            sp_rp.leader_checked = now;
            sp_rp.main_gone = leader_gone();
        }
        if (sp_rp.main_gone && !grace)
            return 1;
        sp_rp.idle = 1;
        uint64_t poll = sp_hold_next_poll();
        if (grace && (!poll || grace < poll))
            poll = grace; /* a grace ends then */
        if (!sp_rp.main_gone && (!poll || sp_rp.leader_checked + LEADER_CHECK_NS < poll))
            poll = sp_rp.leader_checked + LEADER_CHECK_NS; /* look again then */
        if (poll)
            sp_lock_timedwait_ns(poll); /* held releases: ask the device again then */
        else
            sp_lock_wait();
        sp_rp.idle = 0;
    }
    return 0;
}

/* Lock held. A runtime loaded again: this thread's capture mode there is
 * its default one. */
static void follow_runtime(unsigned *rt_gen)
{
    if (sp_rp.rt_gen == *rt_gen)
        return;
    *rt_gen = sp_rp.rt_gen;
    sp_unlock();
    sp_relaxed_enter();
    sp_lock();
}

static void reaper_loop(int inline_mode);

/* The reaper thread: reaper_loop until told to stop (or idle once main is
 * gone). */
static void *reaper_main(void *arg)
{
    (void)arg;
    sp_api_own_thread(); /* its calls are safepin's, never the program's */
    /* Releases are latency-bound: timed waits of this thread (the revive
     * grace, the runtime's own inside the real unregister) end on time
     * rather than up to the default 50 us late. */
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    /* Woken by a program thread (an unregister's kick), this thread must
     * not preempt it on its CPU and do its own work while the call waits to
     * return: a batch thread never preempts on wake-up. Only from the
     * ordinary policy (it inherits the creator's: a real-time program keeps
     * its reaper real-time). */
    if (sched_getscheduler(0) == SCHED_OTHER)
        sched_setscheduler(0, SCHED_BATCH, &(struct sched_param){0});
    /* What the thread will allocate, through libc's allocator (safepin's
     * own records) and the program's (the runtime's calls), allocated once
     * now: sp_reaper_thread_start waits for it. */
    sp_mem_free(sp_mem_alloc(64));
    void *volatile warm = malloc(64);
    free(warm);
    char exe[8];
    /* (This thread's own link: readable whether or not the first thread
     * is still there.) */
    int exe_ok = syscall(SYS_readlink, "/proc/thread-self/exe", exe, sizeof(exe)) > 0;
    sp_lock();
    sp_rp.exe_ok = sp_rp.exe_ok || exe_ok;
    sp_rp.warm = 1;
    sp_lock_broadcast();
    sp_unlock();
    /* Only now its first runtime call: the program's call that started it
     * waits for sp_rp.warm, and may hold what the runtime's call would wait
     * for (a host function's stream, a capture). */
    sp_relaxed_enter();
    sp_lock();
    reaper_loop(0);
    int joined_later = sp_rp.ended;
    sp_unlock();
    /* Ended idle (main gone): the next start, or the exit, joins it, so
     * that its stack is known free. Abandoned by an exit drain that gave
     * up: nothing joins it, and it is never left joinable. */
    if (!joined_later)
        pthread_detach(pthread_self());
    return NULL;
}

/* Lock held. No reaper thread could be started: the calling thread (one
 * that must wait for the reaper: the exit drain, a synchronous unregister, a
 * free waiting for its release) runs the reaper's loop itself until no work
 * is left, in relaxed capture mode as the reaper does. */
void sp_reaper_run_inline(void)
{
    sp_rp.inline_running = 1;
    sp_unlock();
    int old = sp_relaxed_enter();
    sp_lock();
    reaper_loop(1);
    sp_unlock();
    sp_relaxed_leave(old);
    sp_lock();
    sp_rp.inline_running = 0;
    sp_lock_broadcast();
}

/* Lock held on entry and exit. The reaper's work: the streams' work, ready
 * actions, deferred calls, then batches of releases; until told to stop (or
 * idle once main is gone; inline_mode: until there is no work). */
static void reaper_loop(int inline_mode)
{
    unsigned rt_gen = sp_rp.rt_gen;
    for (;;) {
        if (idle_wait(inline_mode)) {
            if (!inline_mode) {
                sp_rp.started = 0;
                sp_rp.ended = 1;
            }
            break;
        }
        if (sp_rp.abandoned)
            break;
        sp_reaper_grace_expire();
        follow_runtime(&rt_gen);
        if (sp_reaper_streams_work()) {
            sp_unlock();
            sp_streams_service();
            sp_lock();
            sp_lock_broadcast(); /* a drain waiting for that work sees it done */
        }
        if (sp_actions_any_ready()) {
            sp_actions_run_ready();
            continue;
        }
        if (sp_hold_due()) {
            uint64_t held_seq;
            sp_range *held = sp_hold_take(&held_seq);
            if (held)
                sp_reaper_finish_batch(held, held_seq);
            continue;
        }
        if (sp_actions_calls()) {
            sp_actions_run_calls();
            continue;
        }
        if (!sp_rp.q_head) {
            if (sp_rp.stop)
                break;
            continue;
        }
        if (sp_reaper_release_batch())
            break;
    }
}

/* ---- fork ---------------------------------------------------------------- */

void sp_reaper_fork_child(int consistent)
{
    sp_actions_fork_child(consistent);
    sp_actions_fork_reset();
    memset(&sp_rp, 0, sizeof(sp_rp));
    sp_hold_reset();
    sp_streams_fork_child();
}
