/*
 * postmortem.c - when the program dies of a GPU memory fault, an abort or a
 * segmentation fault, print the recent registration history (and that of the
 * ranges holding the faulting address) before it dies. Handlers already
 * installed are chained: after printing, the previous disposition runs.
 *
 * One thread prints the post-mortem; a fault in another thread meanwhile
 * (two streams faulting at once) waits for it to end before chaining, so the
 * report is never cut. Its frames are symbolized in one batch with a
 * deadline (PM_SYMBOLIZE_MS), module+offset after that: a dying program is
 * never held up for long.
 */
#include "diag.h"
#include "ownstack.h"
#include "util.h"

#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PM_SYMBOLIZE_MS 5000

static const int sigs[] = {SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE};
#define NSIGS (sizeof(sigs) / sizeof(sigs[0]))
static struct sigaction old_act[NSIGS];
static pid_t pm_owner; /* thread printing the post-mortem (atomic) */
static pid_t pm_pid;   /* its process: a child forked meanwhile has no post-mortem */
static int pm_done;    /* it has been printed (atomic) */
/* simhip (and runtimes that offer it) says which address the GPU faulted on. */
static uintptr_t (*fault_address_fn)(void);

static int sig_index(int sig)
{
    for (unsigned i = 0; i < NSIGS; i++)
        if (sigs[i] == sig)
            return (int)i;
    return -1;
}

static void say(const char *s) { sp_log_write(s, strlen(s)); }

static void postmortem(int sig, siginfo_t *info)
{
    uintptr_t addr = 0;
    const char *what = sig == SIGABRT ? "abort" : sig == SIGSEGV ? "segmentation fault"
                     : sig == SIGBUS ? "bus error" : "fatal signal";
    if (fault_address_fn)
        addr = fault_address_fn();
    if (!addr && (sig == SIGSEGV || sig == SIGBUS) && info)
        addr = (uintptr_t)info->si_addr;
    uint64_t deadline = sp_now_ns() + PM_SYMBOLIZE_MS * 1000000ull;
    char buf[256];
    /* One write a line: another thread's output (the runtime's fault line
     * of a second fault) never lands inside it. */
    char at[48] = "";
    if (addr)
        snprintf(at, sizeof(at), " at address 0x%lx", (unsigned long)addr);
    snprintf(buf, sizeof(buf), "==%d==safepin: post-mortem: %s (signal %d)%s\n", (int)getpid(),
             what, sig, at);
    say(buf);
    /* Each event once: those of the ranges that held the address first,
     * then the rest of the recent history. */
    if (addr) {
        snprintf(buf, sizeof(buf),
                 "==%d==safepin: history of the ranges that held 0x%lx (oldest first):\n",
                 (int)getpid(), (unsigned long)addr);
        say(buf);
        sp_history_dump(addr, 0, deadline);
    }
    snprintf(buf, sizeof(buf), "==%d==safepin: %s registration history (oldest first):\n",
             (int)getpid(), addr ? "other recent" : "recent");
    say(buf);
    sp_history_dump(addr, 1, deadline);
    sp_diag_report_dying(sig);
    snprintf(buf, sizeof(buf), "==%d==safepin: end of post-mortem\n", (int)getpid());
    say(buf);
}

/* On safepin's stack when it is free: the faulting thread's own may be
 * small or nearly used up. Never waits for it: the thread that holds it may
 * itself have faulted, and wait below for this one's post-mortem to end
 * (what runs here is written for small stacks: static buffers). */
typedef struct pm_call {
    int sig;
    siginfo_t *info;
} pm_call;

static void postmortem_own(void *p)
{
    pm_call *c = p;
    postmortem(c->sig, c->info);
}

static void handler(int sig, siginfo_t *info, void *uctx)
{
    int i = sig_index(sig);
    pid_t me = (pid_t)syscall(SYS_gettid);
    for (;;) {
        pid_t owner = 0;
        if (__atomic_load_n(&pm_done, __ATOMIC_ACQUIRE))
            break;
        if (__atomic_compare_exchange_n(&pm_owner, &owner, me, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE)) {
            __atomic_store_n(&pm_pid, getpid(), __ATOMIC_RELEASE);
            pm_call c = {sig, info};
            sp_call_on_own_stack_if_free(postmortem_own, &c);
            __atomic_store_n(&pm_done, 1, __ATOMIC_RELEASE);
            break;
        }
        if (owner == me)
            break; /* a fault inside the post-mortem itself */
        struct timespec ts = {0, 1000000}; /* another thread is printing: let it end */
        nanosleep(&ts, NULL);
    }
    /* Chain to what was there before. */
    if (i >= 0) {
        struct sigaction *o = &old_act[i];
        if (o->sa_flags & SA_SIGINFO) {
            if (o->sa_sigaction) {
                o->sa_sigaction(sig, info, uctx);
                return;
            }
        } else if (o->sa_handler != SIG_DFL && o->sa_handler != SIG_IGN) {
            o->sa_handler(sig);
            return;
        }
        sigaction(sig, o, NULL);
    } else {
        signal(sig, SIG_DFL);
    }
    raise(sig);
}

void sp_postmortem_wait(void)
{
    pid_t owner = __atomic_load_n(&pm_owner, __ATOMIC_ACQUIRE);
    pid_t pid = __atomic_load_n(&pm_pid, __ATOMIC_ACQUIRE); /* 0: being set */
    if (!owner || owner == (pid_t)syscall(SYS_gettid) || (pid && pid != getpid()))
        return;
    struct timespec ts = {0, 1000000};
    for (int i = 0; i < 10000 && !__atomic_load_n(&pm_done, __ATOMIC_ACQUIRE); i++)
        nanosleep(&ts, NULL);
    /* The signal's own action comes next, on the faulting thread. */
    for (int i = 0; i < 1000; i++)
        nanosleep(&ts, NULL);
}

static int pm_installed; /* atomic */

void sp_postmortem_init(void)
{
    fault_address_fn = (uintptr_t(*)(void))dlsym(RTLD_DEFAULT, "simhip_last_fault_address");
}

void sp_postmortem_install(void)
{
    if (sp_opt.history <= 0 || __atomic_load_n(&pm_installed, __ATOMIC_ACQUIRE) ||
        __atomic_exchange_n(&pm_installed, 1, __ATOMIC_ACQ_REL))
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    /* Only where the program left the default: a handler of its own (a
     * crash reporter, a runtime's guard pages, one with SA_RESETHAND or its
     * own mask and stack) stays exactly as it set it, and an ignored signal
     * stays ignored (G12). */
    for (unsigned i = 0; i < NSIGS; i++) {
        struct sigaction cur;
        if (sigaction(sigs[i], NULL, &cur) != 0 || (cur.sa_flags & SA_SIGINFO) ||
            cur.sa_handler != SIG_DFL)
            continue;
        sigaction(sigs[i], &sa, &old_act[i]);
    }
}
