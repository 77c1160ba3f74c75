/*
 * init.c - one-time initialization and the end of the run (forks: fork.c).
 *
 * How a run ends:
 * - exit(): the program's atexit handlers run, then every library's ELF
 *   destructor. safepin is preloaded, so its destructor (sp_exit_drain)
 *   runs first among the libraries': the exit drain completes the pending
 *   releases while the runtime, whose destructor may tear it down, is still
 *   there. The end-of-run report (sp_at_exit, registered with on_exit from
 *   safepin's constructor) runs last, after every destructor, so that
 *   registrations released by any cleanup are not reported as leaks.
 * - pthread_exit() from main: the process ends, through exit(0), when its
 *   last thread ends. safepin's reaper ends itself once main is gone and it
 *   has no work, so it is never what keeps the process alive.
 * - exit() from a host function, or with a capture open: the drain does not
 *   wait for work that cannot complete before the process ends, and says so
 *   at log=info (not a violation).
 */
#include "internal.h"
#include "face.h"
#include "ownstack.h"
#include "runtime.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

/* See internal.h. */
__thread int sp_tls_in_hook __attribute__((tls_model("initial-exec")));

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int initialized;
static int drain_done;
static int exit_done;
static sp_drain_end drain_end = SP_DRAIN_DONE;

/* Its value is set in the main thread only: its destructor runs when main
 * ends with pthread_exit (exit() runs no thread-specific destructors). */
static pthread_key_t main_key;
static int main_key_made;

int sp_in_host_function(void) { return sp_tls_in_hostfn > 0; }

static void main_thread_ended(void *v)
{
    (void)v;
    sp_reaper_main_gone();
}

static void mark_main_thread(void)
{
    if (main_key_made)
        pthread_setspecific(main_key, &main_key);
}

int sp_initialized(void) { return __atomic_load_n(&initialized, __ATOMIC_ACQUIRE); }

/* The fork child (fork.c): the exit path starts anew; its one thread is its
 * main thread. */
void sp_exit_fork_child(void)
{
    drain_done = 0;
    exit_done = 0;
    drain_end = SP_DRAIN_DONE;
    mark_main_thread();
}

static void do_init(void)
{
    sp_fork_init(); /* first: see fork.c */
    sp_mem_init();  /* before any thread of the program's allocates (util.h) */
    /* The stack diagnostics run on (G12): mapped now, never in a hook. */
    sp_ownstack_init();
    sp_options_parse(getenv("SAFEPIN_OPTIONS"));
    sp_reaper_init(); /* its stack: mapped now, before the program runs */
    sp_diag_init();
    sp_resolve_backend();
    sp_mem_hooks_init();
    /* The faces linked in (face.h), lowest order first: each registers
     * its table in its slot (runtime.h). */
    const sp_face *faces[SP_FACES_MAX];
    for (int i = 0, n = sp_faces(faces, SP_FACES_MAX); i < n; i++)
        if (faces[i]->init)
            faces[i]->init();
    on_exit(sp_at_exit, NULL);
    if (gettid() == getpid()) {
        main_key_made = pthread_key_create(&main_key, main_thread_ended) == 0;
        mark_main_thread();
    }
    __atomic_store_n(&initialized, 1, __ATOMIC_RELEASE);
    sp_postmortem_init();
    if (!sp_dlvsym_hooked())
        sp_log(SP_LOG_INFO, "dlvsym-not-hooked",
               "libc has no dlvsym@GLIBC_2.34 nor dlvsym@GLIBC_2.2.5: dlvsym look-ups pass through "
               "untouched, and functions a program takes with dlvsym are not protected");
    if (sp_opt.log_level >= SP_LOG_DEBUG) {
        sp_log(SP_LOG_DEBUG, "debug", "safepin %s active in pid %d; effective options:",
               SAFEPIN_VERSION, (int)getpid());
        sp_options_print();
    }
}

void sp_init(void) { pthread_once(&init_once, do_init); }

static int report_leak(sp_range *r, void *arg)
{
    (void)arg;
    if (r->state == SP_RANGE_LIVE && !r->leak_reported) {
        r->leak_reported = 1;
        SP_COUNT(leaks);
        sp_diag(SP_LEAK_AT_EXIT, r, "0x%lx (%zu bytes, flags 0x%x, nest %d) still registered at exit%s",
                (unsigned long)r->base, r->size, r->flags, r->nest,
                r->stuck ? " (its real unregister failed; the memory was kept alive)" : "");
    } else if (r->state == SP_RANGE_RELEASING && drain_end == SP_DRAIN_HOST_FUNCTION) {
        sp_log(SP_LOG_INFO, "exit",
               "release of 0x%lx (%zu bytes) not completed: exit was called from a host function, "
               "so the exit drain did not wait (device work queued behind it never runs)",
               (unsigned long)r->base, r->size);
    } else if (r->state == SP_RANGE_RELEASING && drain_end == SP_DRAIN_CAPTURE) {
        sp_log(SP_LOG_INFO, "exit",
               "release of 0x%lx (%zu bytes) not completed: it waits for a stream capture still "
               "open at exit",
               (unsigned long)r->base, r->size);
    } else if (r->state == SP_RANGE_RELEASING) {
        sp_diag(SP_RELEASE_TIMEOUT, r,
                "release of 0x%lx (%zu bytes) not completed within drain_timeout_ms=%ld",
                (unsigned long)r->base, r->size, sp_opt.drain_timeout_ms);
    }
    return 0;
}

/* A process that never had a runtime (a shell, `timeout`, any helper
 * that inherited LD_PRELOAD) has nothing to drain or report, and must not
 * overwrite the program's report. */
static int nothing_to_do(void)
{
    return !__atomic_load_n(&initialized, __ATOMIC_ACQUIRE) ||
           (!sp_faces_have_runtime() && !sp_rt_any_present() && sp_violations() == 0 &&
            SP_STAT(registrations) == 0);
}

/* exit() from a signal handler that interrupted one of safepin's hooks on
 * this thread. The hook may hold safepin's lock (or be half-way through
 * taking it), or a runtime lock inside a call safepin made, which the reaper
 * may be waiting for: nothing can be drained and no lock taken (waiting
 * would wait for ourselves). The pending releases are not completed and
 * no leak walk is made; said at log=info. */
static int exit_interrupted_hook(void)
{
    if (!sp_lock_held() && sp_tls_in_hook == 0)
        return 0;
    static int said;
    if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
        sp_log(SP_LOG_INFO, "exit",
               "exit() interrupted a safepin hook on this thread (a signal handler): "
               "no exit drain and no leak report");
    return 1;
}

/* The exit drain, once: from safepin's ELF destructor, before the runtime's
 * own destructor can tear it down (see the top of this file). */
__attribute__((destructor)) static void sp_exit_drain(void)
{
    if (exit_interrupted_hook())
        return;
    if (nothing_to_do() || __atomic_exchange_n(&drain_done, 1, __ATOMIC_ACQ_REL))
        return;
    sp_reaper_exit_drain(sp_opt.drain_timeout_ms, sp_tls_in_hostfn > 0, &drain_end);
}

void sp_exit_drain_early(void) { sp_exit_drain(); }

/* Strict mode's verdict on a program that exited with status: it fails
 * (and says why) on a violation, or on a problem in SAFEPIN_OPTIONS (a
 * misspelled key must not pass CI with its check off). */
static int strict_fails(int status)
{
    if (!sp_opt.strict || status != 0)
        return 0;
    unsigned long long v = sp_violations();
    int p = sp_options_problems();
    if (v > 0 && p > 0)
        sp_log(SP_LOG_ERROR, "strict", "%llu violation(s), %d problem(s) in SAFEPIN_OPTIONS: exit status %ld",
               v, p, sp_opt.exitcode);
    else if (v > 0)
        sp_log(SP_LOG_ERROR, "strict", "%llu violation(s): exit status %ld", v, sp_opt.exitcode);
    else if (p > 0)
        sp_log(SP_LOG_ERROR, "strict", "%d problem(s) in SAFEPIN_OPTIONS (said at start): exit status %ld",
               p, sp_opt.exitcode);
    return v > 0 || p > 0;
}

void sp_at_exit(int status, void *arg)
{
    (void)arg;
    sp_postmortem_wait(); /* a fatal signal on another thread ends the process first */
    if (__atomic_exchange_n(&exit_done, 1, __ATOMIC_ACQ_REL))
        return;
    if (nothing_to_do())
        return;
    if (!exit_interrupted_hook()) {
        sp_exit_drain(); /* if no destructor ran it (exit from a destructor) */
        if (drain_end == SP_DRAIN_DONE) /* releases started by later destructors */
            sp_reaper_exit_drain(sp_opt.drain_timeout_ms, sp_tls_in_hostfn > 0, &drain_end);
        sp_lock();
        sp_reg_for_each(report_leak, NULL);
        sp_unlock();
    }
    sp_diag_finish(status);
    if (strict_fails(status)) {
        fflush(NULL);
        _exit((int)sp_opt.exitcode);
    }
}

/* _exit, _Exit and quick_exit: the program asked for no cleanup, so nothing
 * is drained and no leak is looked for; but the report is written and
 * strict mode's verdict kept (G9). Returns the status to exit with. A vfork
 * child (it shares its parent's memory) only exits. */
static int exit_now_status(int status)
{
    if (!sp_diag_own_process() || __atomic_exchange_n(&exit_done, 1, __ATOMIC_ACQ_REL))
        return status;
    if (!sp_faces_have_runtime() && sp_violations() == 0 && SP_STAT(registrations) == 0)
        return status;
    sp_diag_finish(status);
    return strict_fails(status) ? (int)sp_opt.exitcode : status;
}

void sp_exit_immediately(int status)
{
    sp_postmortem_wait();
    status = exit_now_status(status);
    if (sp_real._exit)
        sp_real._exit(status);
    for (;;)
        syscall(SYS_exit_group, status);
}

void sp_quick_exit(int status)
{
    status = exit_now_status(status);
    if (sp_real.quick_exit)
        sp_real.quick_exit(status);
    sp_exit_immediately(status);
}
