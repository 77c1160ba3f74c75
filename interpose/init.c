/*
 * init.c - one-time initialization, fork handlers, the end of the run.
 */
#include "internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

__thread int sp_tls_in_hostfn __attribute__((tls_model("initial-exec")));

void sp_postmortem_install(void);

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int exit_done;

int sp_in_host_function(void) { return sp_tls_in_hostfn > 0; }

/* The child forgets the registry and the reaper; nothing is locked around
 * fork (see sp_reg_fork_child). */
static void fork_child(void)
{
    sp_reg_fork_child();
    sp_reaper_fork_child();
}

static void do_init(void)
{
    sp_options_parse(getenv("SAFEPIN_OPTIONS"));
    sp_diag_init();
    sp_resolve_backend();
    sp_streams_init_devices();
    pthread_atfork(NULL, NULL, fork_child);
    on_exit(sp_at_exit, NULL);
    if (sp_opt.history > 0)
        sp_postmortem_install();
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
    } else if (r->state == SP_RANGE_RELEASING) {
        sp_diag(SP_RELEASE_TIMEOUT, r,
                "release of 0x%lx (%zu bytes) not completed within drain_timeout_ms=%ld",
                (unsigned long)r->base, r->size, sp_opt.drain_timeout_ms);
    }
    return 0;
}

void sp_at_exit(int status, void *arg)
{
    (void)arg;
    if (__atomic_exchange_n(&exit_done, 1, __ATOMIC_ACQ_REL))
        return;
    /* A process that never had a HIP runtime (a shell, `timeout`, any helper
     * that inherited LD_PRELOAD) has nothing to report and must not
     * overwrite the program's report. */
    if (!sp_real.hipHostRegister && sp_violations() == 0 && sp_stat.registrations == 0)
        return;
    sp_reaper_drain(sp_opt.drain_timeout_ms);
    sp_reg_lock();
    sp_reg_for_each(report_leak, NULL);
    sp_reg_unlock();
    sp_diag_finish(status);
    if (sp_opt.strict && status == 0 && sp_violations() > 0) {
        sp_log(SP_LOG_ERROR, "strict", "%llu violation(s): exit status %ld",
               (unsigned long long)sp_violations(), sp_opt.exitcode);
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
    if (!sp_real.hipHostRegister && sp_violations() == 0 && sp_stat.registrations == 0)
        return status;
    sp_diag_finish(status);
    if (sp_opt.strict && status == 0 && sp_violations() > 0) {
        sp_log(SP_LOG_ERROR, "strict", "%llu violation(s): exit status %ld",
               (unsigned long long)sp_violations(), sp_opt.exitcode);
        return (int)sp_opt.exitcode;
    }
    return status;
}

void sp_exit_immediately(int status)
{
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
