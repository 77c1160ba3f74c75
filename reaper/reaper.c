/*
 * reaper.c - deferred releases and the background thread that runs them
 * and the deferred actions (actions.c); the streams its markers cover:
 * streams/.
 */
#include "reaper.h"
#include "reaper_internal.h"
#include "api_error.h"
#include "diag.h"
#include "hold.h"
#include "options.h"
#include "runtime.h"
#include "streams.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The reaper's part of a range (sp_range.part, after the diagnostics'):
 * its place in the release queue. */
typedef struct sp_release {
    sp_range *next;         /* next range in the queue */
    uint64_t seq;           /* submission sequence of its current release */
    unsigned queued : 1;    /* on the queue */
    unsigned in_batch : 1;  /* taken by the reaper, markers being waited on */
    unsigned waiting : 1;   /* an ordered unregister waits for the work before it
                               and completes the release itself (not queued) */
    unsigned in_grace : 1;  /* in its revive grace, its work done: on R.grace
                               (linked by next, as it is on no queue) */
    unsigned graced : 1;    /* this release had its grace */
    unsigned no_grace : 1;  /* its size's graces were wasted: none (grace_wanted) */
} sp_release;

#define RELEASE_PART ((SP_SITES_PART_END + 7) & ~(size_t)7)
_Static_assert(RELEASE_PART + sizeof(sp_release) <= SP_REG_PART_ROOM,
               "the registry's room per range holds the sites and the reaper's part");

static sp_release *rel(const sp_range *r) { return sp_reg_part(r, RELEASE_PART); }

/* For the hold (hold.h): a batch's links and a range's release sequence. */
sp_range *sp_reaper_batch_next(const sp_range *r) { return rel(r)->next; }
void sp_reaper_batch_link(sp_range *r, sp_range *next) { rel(r)->next = next; }
uint64_t sp_reaper_release_seq(const sp_range *r) { return rel(r)->seq; }

#define SP_GRAVEYARD 1024
/* The most recent releases keep their stacks (where registered, where
 * unregistered or freed) for a double unregister's diagnostic. */
#define SP_GRAVE_SITES 64
typedef struct grave {
    uintptr_t base;
    size_t size;
    int rt;
    sp_site *reg, *unreg;
} grave;

static struct {
    sp_range *q_head, *q_tail;
    sp_range *grace;  /* ranges in their revive grace (see grace_enter) */
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
    grave graves[SP_GRAVE_SITES];
    unsigned graves_i;
    unsigned char grace_wasted[64]; /* by size class: graces ended by a free, in a row */
    uint64_t grace_retry_ns[64];    /* by size class: when a skipped class may try again */
} R;


/* ---- queue -------------------------------------------------------------- */

static void enqueue(sp_range *r)
{
    rel(r)->next = NULL;
    rel(r)->queued = 1;
    if (R.q_tail)
        rel(R.q_tail)->next = r;
    else
        R.q_head = r;
    R.q_tail = r;
}

static void *reaper_main(void *arg);
static void grace_unlink(sp_range *r);

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
 * (run_inline). Once the program's main thread has ended with pthread_exit
 * it ends whenever it has no work, so it never keeps the process alive: the
 * process ends with its last thread, and the exit drain runs there. An ended
 * reaper is joined before another starts on the same stack. */
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

static void start_reaper(void)
{
    if (R.started)
        return;
    if (tls_mem_hook > 0) {
        R.start_wanted = 1; /* the next runtime hook starts it */
        return;
    }
    if (R.ended) {
        /* Its stack is free once it is joined; still on its way out: later. */
        if (pthread_tryjoin_np(R.thread, NULL) != 0) {
            R.start_wanted = 1;
            return;
        }
        R.ended = 0;
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
    R.warm = 0;
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = sp_test_fail(SP_TF_THREAD) ? EAGAIN : pthread_create(&R.thread, ap, reaper_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (ap)
        pthread_attr_destroy(ap);
    if (rc != 0) {
        sp_log(SP_LOG_ERROR, "runtime-error", "cannot start the reaper thread: %s", strerror(rc));
        return;
    }
    R.started = 1;
    R.start_wanted = 0;
    /* Its first allocations (the arenas and caches an allocator makes for a
     * new thread: mappings the kernel places) are made now, while the
     * program is in its runtime call, never later, when the program may
     * have just unmapped the place where they would land. Bounded. */
    uint64_t until = sp_now_ns() + 200000000ull;
    while (!R.warm && sp_now_ns() < until)
        sp_lock_timedwait_ns(until);
}

/* Lock held. The reaper is needed: started now, or at the next runtime
 * hook if this thread is inside a memory hook. */
static void want_reaper(void) { start_reaper(); }

void sp_reaper_start(void)
{
    if (!R.stop && !R.abandoned)
        start_reaper();
}

/* Lock held. The process ends: an ended reaper is joined (never left
 * joinable). */
static void join_ended(void)
{
    if (R.ended && pthread_tryjoin_np(R.thread, NULL) == 0)
        R.ended = 0;
}

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
static int grace_wanted(size_t size)
{
    unsigned c = size_class(size);
    if (R.grace_wasted[c] < GRACE_WASTED_MAX)
        return 1;
    uint64_t now = sp_now_ns();
    if (now < R.grace_retry_ns[c])
        return 0;
    R.grace_retry_ns[c] = now + GRACE_RETRY_NS; /* a trial */
    return 1;
}

/* Lock held. r's grace was ended by a free of its memory. */
static void grace_wasted(const sp_range *r)
{
    unsigned c = size_class(r->size);
    if (R.grace_wasted[c] < UCHAR_MAX)
        R.grace_wasted[c]++;
    if (R.grace_wasted[c] == GRACE_WASTED_MAX)
        R.grace_retry_ns[c] = sp_now_ns() + GRACE_RETRY_NS;
}

void sp_reaper_grace_forget(void)
{
    memset(R.grace_wasted, 0, sizeof(R.grace_wasted));
    memset(R.grace_retry_ns, 0, sizeof(R.grace_retry_ns));
}

/* The releases this thread started (a fork's prepare handlers: did the
 * program's handler start one? Another thread's, racing with the fork, are
 * as a bare run leaves them). */
static __thread uint64_t thread_last_seq __attribute__((tls_model("initial-exec")));

/* Lock held. r leaves LIVE (or starts a new release); its sequence. */
static uint64_t start_release(sp_range *r)
{
    if (r->state != SP_RANGE_RELEASING) {
        r->state = SP_RANGE_RELEASING;
        R.n_releasing++;
    }
    r->nest = 0;
    rel(r)->seq = __atomic_add_fetch(&R.submit_seq, 1, __ATOMIC_RELAXED);
    thread_last_seq = rel(r)->seq;
    rel(r)->no_grace = 0;
    if (sp_opt.revive && r->size >= (size_t)sp_opt.revive_grace_bytes && !grace_wanted(r->size)) {
        rel(r)->no_grace = 1;
        SP_COUNT(graces_skipped);
    }
    if (!r->t_unregister_ns)
        r->t_unregister_ns = sp_now_ns();
    SP_COUNT(releases_submitted);
    return rel(r)->seq;
}

uint64_t sp_reaper_release_ordered(sp_range *r)
{
    uint64_t seq = start_release(r);
    if (!rel(r)->queued && !rel(r)->in_batch)
        rel(r)->waiting = 1;
    return seq;
}

void sp_reaper_release(sp_range *r)
{
    start_release(r);
    rel(r)->waiting = 0;
    if (!rel(r)->queued && !rel(r)->in_batch)
        enqueue(r);
    want_reaper();
    if (R.idle)
        __atomic_store_n(&R.need_wake, 1, __ATOMIC_RELAXED);
}

void sp_reaper_poke(void)
{
    want_reaper();
    if (R.idle)
        __atomic_store_n(&R.need_wake, 1, __ATOMIC_RELAXED);
}

/* The release waits for the work enqueued before a capture began, not for
 * the capture's end: said once per marker set that saw one. */
static void say_capture_deferred(const sp_range *r)
{
    SP_COUNT(capture_deferrals);
    sp_diag(SP_CAPTURE_DEFERRED, r,
            "release during a stream capture: captured work never runs, so the release waits "
            "for the work enqueued before the capture began, not for the capture's end");
}

int sp_wait_prior_work(uintptr_t base)
{
    sp_lock();
    sp_marks *m = sp_marks_take();
    sp_unlock();
    if (!m)
        return 0;
    int ok = sp_marks_record(m) == 0;
    uint64_t waited = 0;
    if (ok && !sp_marks_done(m)) {
        uint64_t t0 = sp_now_ns();
        sp_marks_wait(m);
        waited = sp_now_ns() - t0;
    }
    int saw_capture = sp_marks_saw_capture(m);
    sp_marks_put(m);
    if (ok && saw_capture) {
        sp_lock();
        say_capture_deferred(base ? sp_reg_find(base) : NULL);
        sp_unlock();
    }
    /* Work still running: a marker behind none completes in microseconds;
     * one that took a millisecond or more waited for the program's work.
     * A hazard only where the device may use the range from any work (its
     * device address was asked, or it was registered mapped): other work
     * on a range the device does not address is no hazard to it. */
    if (ok && base && waited >= 1000000ull) {
        sp_lock();
        sp_range *r = sp_reg_find(base);
        if (r && (r->used || (r->flags & sp_rt(r->rt)->mapped_flag)))
            sp_hazard_prevented(SP_HZ_INFLIGHT_UNREGISTER, r,
                            "unregister of 0x%lx with device work enqueued before it still "
                            "running (waited %.1f ms)",
                            (unsigned long)base, (double)waited / 1e6);
        sp_unlock();
    }
    return ok;
}


void sp_reaper_wait_backlog(void)
{
    long max = sp_opt.max_pending;
    if (max <= 0 || (long)R.n_releasing <= max)
        return;
    SP_COUNT(waits_for_release);
    while ((long)R.n_releasing > max && R.started && !R.stop && !R.capture_blocked &&
           !R.abandoned)
        sp_reaper_wait_progress();
}

void sp_reaper_kick(void)
{
    if (__atomic_load_n(&R.need_wake, __ATOMIC_RELAXED) &&
        __atomic_exchange_n(&R.need_wake, 0, __ATOMIC_RELAXED))
        sp_lock_broadcast();
}

/* Lock held: before waiting for the reaper, make sure it is awake. */
static void kick_locked(void)
{
    if (__atomic_exchange_n(&R.need_wake, 0, __ATOMIC_RELAXED))
        sp_lock_broadcast();
}

static void run_inline(void);

/* Lock held. Wait for the reaper to make progress. Without a reaper thread
 * (it could not be started: out of threads), starting it is tried again,
 * and failing that the waiter does the reaper's work itself. */
void sp_reaper_wait_progress(void)
{
    kick_locked();
    if (!R.started && !R.stop && !R.abandoned) {
        start_reaper();
        if (!R.started && !R.inline_running) {
            run_inline();
            return;
        }
    }
    sp_lock_wait();
}

int sp_reaper_revive(sp_range *r)
{
    if (r->state != SP_RANGE_RELEASING || r->unregistering || r->freed)
        return 0;
    if (rel(r)->in_grace)
        grace_unlink(r);
    rel(r)->graced = 0; /* a later release has a grace of its own */
    R.grace_wasted[size_class(r->size)] = 0; /* its size is re-registered */
    r->state = SP_RANGE_LIVE;
    r->nest = 1;
    r->t_unregister_ns = 0;
    R.n_releasing--;
    SP_COUNT(releases_cancelled);
    /* A queued range is dropped from the queue lazily: the reaper skips
     * ranges that are LIVE again. Actions that waited only for it are ready
     * now; the reaper runs them. */
    if (sp_actions_settle(r))
        sp_lock_broadcast();
    return 1;
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
    while ((r = sp_reg_find(base)) && r->id == id && r->state == SP_RANGE_RELEASING) {
        if (R.capture_blocked)
            return -1;
        sp_reaper_wait_progress();
    }
    return 0;
}


int sp_reaper_released_view(uintptr_t base, sp_diag_range *out)
{
    for (unsigned k = 0; k < SP_GRAVE_SITES && k < R.graves_i; k++) {
        const grave *g = &R.graves[(R.graves_i - 1 - k) % SP_GRAVE_SITES];
        if (g->base == base && base) {
            *out = (sp_diag_range){g->base, g->size, g->rt, g->reg, g->unreg};
            return 1;
        }
    }
    return 0;
}

int sp_reaper_recently_released(uintptr_t base)
{
    for (unsigned i = 0; i < SP_GRAVEYARD; i++)
        if (R.graveyard[i] == base && base)
            return 1;
    return 0;
}

/* The bases that owe the program one successful unregister: an open-
 * addressing table (linear probing, deletion by shifting back), in .bss,
 * touched only by programs that free registered memory. Up to 3/4 full:
 * past that, a new base owes nothing (its unregister gets "not
 * registered"). Lock held for all three. */
#define SP_OWED_CAP 4096u
static uintptr_t owed_tab[SP_OWED_CAP];
static unsigned owed_n;

static unsigned owed_home(uintptr_t base)
{
    return (unsigned)(((uint64_t)base * 0x9E3779B97F4A7C15ull) >> 52) & (SP_OWED_CAP - 1);
}

void sp_reaper_owe(uintptr_t base)
{
    if (!base || owed_n >= SP_OWED_CAP / 4 * 3)
        return;
    unsigned i = owed_home(base);
    while (owed_tab[i] && owed_tab[i] != base)
        i = (i + 1) & (SP_OWED_CAP - 1);
    if (!owed_tab[i]) {
        owed_tab[i] = base;
        owed_n++;
    }
}

int sp_reaper_take_owed(uintptr_t base)
{
    if (!base || !owed_n)
        return 0;
    unsigned i = owed_home(base);
    while (owed_tab[i] && owed_tab[i] != base)
        i = (i + 1) & (SP_OWED_CAP - 1);
    if (!owed_tab[i])
        return 0;
    /* Delete, then move back each later entry of the run that its home
     * allows, so that no probe stops early. */
    owed_tab[i] = 0;
    owed_n--;
    for (unsigned j = (i + 1) & (SP_OWED_CAP - 1); owed_tab[j]; j = (j + 1) & (SP_OWED_CAP - 1)) {
        unsigned h = owed_home(owed_tab[j]);
        /* Is h cyclically outside (i, j]? Then the entry may move to i. */
        if ((j > i && (h <= i || h > j)) || (j < i && h <= i && h > j)) {
            owed_tab[i] = owed_tab[j];
            owed_tab[j] = 0;
            i = j;
        }
    }
    return 1;
}

/* ---- the thread --------------------------------------------------------- */

/* Lock held. 1 if r's release waits a grace for an identical re-register:
 * large ranges are expensive to pin again. */
static int grace_applies(const sp_range *r)
{
    return sp_opt.revive && sp_opt.revive_grace_us > 0 && !r->freed && !rel(r)->graced &&
           !rel(r)->no_grace && r->size >= (size_t)sp_opt.revive_grace_bytes;
}

static uint64_t grace_deadline(const sp_range *r)
{
    return r->t_unregister_ns + (uint64_t)sp_opt.revive_grace_us * 1000ull;
}

int sp_reaper_release_graced(const sp_range *r) { return grace_applies(r); }

/* Lock held. r's release waits a grace, and some of it is left. */
static int grace_left(const sp_range *r)
{
    return grace_applies(r) && !R.stop && sp_now_ns() < grace_deadline(r);
}

/* ---- the revive grace --------------------------------------------------- *
 * A release whose device work is known done (the ordered caller's wait, or
 * the reaper's markers) waits out its grace on R.grace, off the queue, so
 * that neither the reaper nor anyone else waits meanwhile. It leaves when an
 * identical re-register revives it (sp_reaper_revive), when the program
 * frees its memory or when the grace ends; the reaper releases it then.
 * (The freeing thread does not: a real unregister that waits for the
 * whole device would make free() wait for work another thread enqueued,
 * a host function that waits for a lock the freeing thread holds, where
 * a free without safepin never waits.) */

/* Lock held. */
static void grace_enter(sp_range *r)
{
    rel(r)->in_grace = 1;
    rel(r)->graced = 1;
    SP_COUNT(graces);
    rel(r)->next = R.grace;
    R.grace = r;
    sp_reaper_poke(); /* the reaper ends the grace */
}

/* Lock held. */
static void grace_unlink(sp_range *r)
{
    for (sp_range **pp = &R.grace; *pp; pp = &rel(*pp)->next)
        if (*pp == r) {
            *pp = rel(r)->next;
            break;
        }
    rel(r)->in_grace = 0;
    rel(r)->next = NULL;
}

/* Lock held. r's grace is over: freed, timed out, or the reaper is told
 * to stop. */
static int grace_over(const sp_range *r, uint64_t now)
{
    return r->freed || R.stop || now >= grace_deadline(r);
}

/* Lock held. When the reaper must next look at the grace list: 0 if it is
 * empty, else the earliest end (now or earlier: at once). */
static uint64_t grace_next_ns(void)
{
    uint64_t next = 0, now = 0;
    for (sp_range *r = R.grace; r; r = rel(r)->next) {
        if (!now)
            now = sp_now_ns();
        uint64_t t = grace_over(r, now) ? now : grace_deadline(r);
        if (!next || t < next)
            next = t;
    }
    return next;
}

static int grace_due(void)
{
    uint64_t t = grace_next_ns();
    return t && t <= sp_now_ns();
}

/* Lock held. Ranges whose grace is over go on the queue: the reaper's
 * markers (and, where the runtime's unregister stalls the device, the
 * hold) come before their real unregister, as for any release. */
static void grace_expire(void)
{
    uint64_t now = sp_now_ns();
    for (sp_range *r = R.grace, *next; r; r = next) {
        next = rel(r)->next;
        if (grace_over(r, now)) {
            grace_unlink(r);
            enqueue(r);
        }
    }
}

/* Lock held: the real unregister of r, its actions, and its removal. The
 * real call's answer. */
static int complete_release(sp_range *r)
{
    r->unregistering = 1;
    uintptr_t base = r->base;
    uint64_t tok = sp_reg_op_begin(base, r->size);
    const sp_rt_ops *o = sp_rt(r->rt);
    sp_unlock();
    int e = o->unregister(r->place, (void *)base);
    uint64_t done = sp_now_ns();
    sp_lock();
    sp_reg_op_end(tok);
    if (e != 0 && e != o->err_not_registered && e != o->err_gone) {
        /* The runtime may still pin it: keep the memory alive and the range
         * registered (LIVE, its nest 1); a later unregister tries again,
         * exit reports it as a leak. */
        sp_diag(SP_RUNTIME_ERROR, r,
                "real %s(0x%lx) in a release returned %d: the range stays "
                "registered and its memory is kept (never freed or unmapped)",
                o->unregister_name, (unsigned long)base, e);
        sp_actions_drop(r);
        r->unregistering = 0;
        r->stuck = 1;
        r->state = SP_RANGE_LIVE;
        r->nest = 1;
        R.n_releasing--;
        sp_lock_broadcast();
        return e;
    }
    if (e != 0 && e == o->err_gone)
        sp_log(SP_LOG_INFO, "exit",
               "real %s(0x%lx) in a release: the runtime was already torn down (%d); the "
               "registration went with it",
               o->unregister_name, (unsigned long)base, e);
    else if (e != 0)
        sp_diag(SP_RUNTIME_ERROR, r,
                "real %s(0x%lx) in a release returned %d (the runtime no longer "
                "had it)",
                o->unregister_name, (unsigned long)base, e);
    sp_record_latency(r->t_unregister_ns, done);
    /* Released: actions deferred from now on do not wait for r. */
    r->released = 1;
    if (sp_actions_settle(r))
        sp_actions_run_ready();
    sp_history_add(SP_EV_RELEASED, r->base, r->size, NULL);
    R.graveyard[R.grave_i++ % SP_GRAVEYARD] = r->base;
    R.n_releasing--;
    SP_COUNT(releases_completed);
    grave *g = &R.graves[R.graves_i++ % SP_GRAVE_SITES];
    sp_site_free(g->reg);
    sp_site_free(g->unreg);
    *g = (grave){r->base, r->size, r->rt, sp_sites(r)->reg, sp_sites(r)->unreg};
    sp_sites(r)->reg = sp_sites(r)->unreg = NULL;
    sp_reg_remove(r);
    sp_lock_broadcast();
    return e;
}

/* Lock held on entry and exit. Waits for the device work enqueued before
 * now (a marker set); never records into a capturing stream. */
static void wait_prior_work(void)
{
    for (;;) {
        sp_marks *m = sp_marks_take();
        if (!m) {
            /* Out of memory: try again shortly, never release early. */
            sp_lock_timedwait_ns(sp_now_ns() + 1000000ull);
            continue;
        }
        sp_unlock();
        int rc = sp_marks_record(m);
        if (rc == 0)
            sp_marks_wait(m);
        int saw_capture = sp_marks_saw_capture(m);
        sp_marks_put(m);
        sp_lock();
        if (rc == 0) {
            if (saw_capture)
                say_capture_deferred(NULL);
            return;
        }
        /* Refused: during a capture, wait for it to end (the exit drain
         * does not wait for that); otherwise (the runtime failing) try
         * again shortly. Never release early. */
        uint64_t retry = sp_now_ns() + 1000000ull;
        R.capture_blocked = 1;
        sp_lock_broadcast();
        sp_marks_wait_captures(&R.stop);
        R.capture_blocked = 0;
        if (R.stop)
            return;
        while (!R.stop && sp_now_ns() < retry)
            sp_lock_timedwait_ns(retry);
    }
}

/* Lock held. Streams' work for the reaper, unless the exit drain ran. */
static int streams_work(void) { return !R.exiting && sp_streams_has_work(); }

int sp_reaper_busy(void)
{
    return sp_reg_count() > 0 || R.q_head || sp_actions_pending() || sp_streams_has_work();
}

void sp_reaper_when_idle(void (*fn)(void))
{
    R.idle_fn = fn;
    start_reaper();
    sp_lock_broadcast();
}

void sp_reaper_main_gone(void)
{
    sp_lock();
    R.main_gone = 1;
    sp_lock_broadcast();
    sp_unlock();
}

void sp_reaper_runtime_gone(void)
{
    sp_streams_fork_child(); /* forgets every stream and event, as in a child */
    R.rt_gen++;
    sp_lock_broadcast();
}

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
 * where /proc works (R.exe_ok, from the reaper's own /proc/thread-self/exe),
 * else the answer is 0. */
static int leader_gone(void)
{
    char buf[8];
    int saved = errno;
    long n = syscall(SYS_readlink, "/proc/self/exe", buf, sizeof(buf));
    int gone = n < 0 && errno == ENOENT;
    errno = saved;
    return gone && R.exe_ok;
}

/* Lock held. Waits for work; returns 1 when the reaper should end instead:
 * the program's main thread is gone and there is no work (start_reaper). */
static int idle_wait(int inline_mode)
{
    while (!R.q_head && !sp_actions_calls() && !streams_work() && !sp_actions_any_ready() &&
           !R.stop && !sp_hold_due() && !grace_due()) {
        if (inline_mode)
            return 1; /* a waiter's turn ends when there is no work */
        if (R.idle_fn && !R.exiting && !sp_reaper_busy()) {
            void (*fn)(void) = R.idle_fn;
            R.idle_fn = NULL;
            R.idle_running = 1;
            sp_unlock();
            fn();
            sp_lock();
            R.idle_running = 0;
            sp_lock_broadcast();
            continue;
        }
        uint64_t grace = grace_next_ns();
        uint64_t now = sp_now_ns();
        if (!R.main_gone && now - R.leader_checked >= LEADER_CHECK_NS) {
            /* A process whose last program thread has ended must end, as
             * it does bare: this thread would keep it alive, and it blocks
             * every signal (a SIGTERM would stay pending). */
            R.leader_checked = now;
            R.main_gone = leader_gone();
        }
        if (R.main_gone && !grace)
            return 1;
        R.idle = 1;
        uint64_t poll = sp_hold_next_poll();
        if (grace && (!poll || grace < poll))
            poll = grace; /* a grace ends then */
        if (!R.main_gone && (!poll || R.leader_checked + LEADER_CHECK_NS < poll))
            poll = R.leader_checked + LEADER_CHECK_NS; /* look again then */
        if (poll)
            sp_lock_timedwait_ns(poll); /* held releases: ask the device again then */
        else
            sp_lock_wait();
        R.idle = 0;
    }
    return 0;
}

/* Lock held. A runtime loaded again: this thread's capture mode there is
 * its default one. */
static void follow_runtime(unsigned *rt_gen)
{
    if (R.rt_gen == *rt_gen)
        return;
    *rt_gen = R.rt_gen;
    sp_unlock();
    sp_relaxed_enter();
    sp_lock();
}

/* Lock held. Takes every queued release as one batch. */
static sp_range *take_batch(void)
{
    sp_range *batch = R.q_head;
    R.q_head = R.q_tail = NULL;
    for (sp_range *r = batch; r; r = rel(r)->next) {
        rel(r)->queued = 0;
        rel(r)->in_batch = 1;
    }
    return batch;
}

/* Lock held (released while waiting). The batch's markers have completed:
 * each range is released, unless it was revived or unregistered again after
 * the markers (mark_seq: the last release they cover). */
static void finish_batch(sp_range *batch, uint64_t mark_seq)
{
    sp_range *r = batch;
    while (r) {
        sp_range *next = rel(r)->next;
        rel(r)->in_batch = 0;
        if (r->state != SP_RANGE_RELEASING) {
            /* revived */
        } else if (rel(r)->seq > mark_seq) {
            if (!rel(r)->queued)
                enqueue(r); /* unregistered again after the markers: new round */
        } else if (grace_left(r)) {
            grace_enter(r);
        } else {
            complete_release(r);
        }
        r = next;
    }
}

int sp_reaper_release_here(uintptr_t base, uint64_t id, uint64_t seq, int covered, int grace_ok,
                           int *real)
{
    sp_range *r = sp_reg_find_containing(base);
    if (!r || r->base != base || r->id != id || rel(r)->seq != seq || !rel(r)->waiting)
        return 0; /* gone, or released again since (that release is another's) */
    rel(r)->waiting = 0;
    if (r->state != SP_RANGE_RELEASING)
        return 0; /* revived meanwhile */
    if (covered && !r->unregistering && !R.abandoned && !R.stop) {
        /* A range an identical re-register may revive waits out its grace
         * first (a free of it ends the grace). */
        if (grace_ok && grace_left(r)) {
            grace_enter(r);
            return 0;
        }
        SP_COUNT(releases_inline);
        *real = complete_release(r);
        return *real == 0 ? 1 : 2;
    }
    /* Not known to be covered (no marker set could be recorded, or this
     * thread captures): the reaper releases it, with markers of its own. */
    enqueue(r);
    start_reaper();
    if (R.idle)
        __atomic_store_n(&R.need_wake, 1, __ATOMIC_RELAXED);
    return 0;
}

void sp_reaper_note_freed(const sp_range *r)
{
    if (!rel(r)->in_grace)
        return;
    grace_wasted(r);
    if (R.idle)
        __atomic_store_n(&R.need_wake, 1, __ATOMIC_RELAXED); /* its grace is over */
}

/* Lock held. One batch: take it, wait for the device work enqueued before
 * it, release it. Returns 1 if exit gave up on the work meanwhile. */
static int release_batch(void)
{
    sp_range *batch = take_batch();
    uint64_t mark_seq = R.submit_seq;
    wait_prior_work();
    if (R.abandoned)
        return 1; /* no call into a runtime torn down */
    SP_COUNT(marker_batches);
    finish_batch(sp_hold_keep(batch, mark_seq), mark_seq); /* the hold keeps some */
    return 0;
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
     * now: start_reaper waits for it. */
    sp_mem_free(sp_mem_alloc(64));
    void *volatile warm = malloc(64);
    free(warm);
    char exe[8];
    /* (This thread's own link: readable whether or not the first thread
     * is still there.) */
    int exe_ok = syscall(SYS_readlink, "/proc/thread-self/exe", exe, sizeof(exe)) > 0;
    sp_lock();
    R.exe_ok = R.exe_ok || exe_ok;
    R.warm = 1;
    sp_lock_broadcast();
    sp_unlock();
    /* Only now its first runtime call: the program's call that started it
     * waits for R.warm, and may hold what the runtime's call would wait
     * for (a host function's stream, a capture). */
    sp_relaxed_enter();
    sp_lock();
    reaper_loop(0);
    int joined_later = R.ended;
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
static void run_inline(void)
{
    R.inline_running = 1;
    sp_unlock();
    int old = sp_relaxed_enter();
    sp_lock();
    reaper_loop(1);
    sp_unlock();
    sp_relaxed_leave(old);
    sp_lock();
    R.inline_running = 0;
    sp_lock_broadcast();
}

/* Lock held on entry and exit. The reaper's work: the streams' work, ready
 * actions, deferred calls, then batches of releases; until told to stop (or
 * idle once main is gone; inline_mode: until there is no work). */
static void reaper_loop(int inline_mode)
{
    unsigned rt_gen = R.rt_gen;
    for (;;) {
        if (idle_wait(inline_mode)) {
            if (!inline_mode) {
                R.started = 0;
                R.ended = 1;
            }
            break;
        }
        if (R.abandoned)
            break;
        grace_expire();
        follow_runtime(&rt_gen);
        if (streams_work()) {
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
                finish_batch(held, held_seq);
            continue;
        }
        if (sp_actions_calls()) {
            sp_actions_run_calls();
            continue;
        }
        if (!R.q_head) {
            if (R.stop)
                break;
            continue;
        }
        if (release_batch())
            break;
    }
}

/* A release submitted up to seq (sp_reaper_release numbers them) that has
 * not completed. sp_reg_for_each callback. Lock held. */
static int pending_upto(sp_range *r, void *seq)
{
    return r->state == SP_RANGE_RELEASING && rel(r)->seq <= *(const uint64_t *)seq;
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
                        : R.n_releasing > 0 || sp_actions_calls() || R.idle_running ||
                              sp_actions_any_ready() || streams_work();
        if (!work)
            break;
        if (!R.started && !R.inline_running && !nowait && !R.abandoned) {
            start_reaper();
            if (!R.started) {
                /* No reaper thread: the drain does its work itself. */
                run_inline();
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
        if (R.capture_blocked) {
            end = SP_DRAIN_CAPTURE;
            break;
        }
        if (!R.started && !R.inline_running)
            break; /* abandoned: nothing will run it */
        if (sp_lock_timedwait_ns(deadline) == ETIMEDOUT) {
            end = SP_DRAIN_TIMEOUT;
            break;
        }
    }
    size_t left = R.n_releasing;
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
    R.exiting = 1;
    join_ended();
    if (*why != SP_DRAIN_DONE) {
        /* What is left cannot complete before the process ends: the reaper
         * makes no further call for it (the runtime is torn down next). */
        __atomic_store_n(&R.abandoned, 1, __ATOMIC_RELEASE);
        R.stop = 1;
        sp_lock_broadcast();
    }
    sp_unlock();
    return left;
}

void sp_reaper_table_sizes(sp_table_sizes *t)
{
    sp_lock();
    t->ranges = sp_reg_count();
    t->releasing = R.n_releasing;
    t->actions = sp_actions_count();
    sp_streams_sizes(&t->streams, &t->orphans);
    sp_unlock();
}

uint64_t sp_reaper_submitted(void) { return thread_last_seq; }

size_t sp_reaper_fork_drain(long timeout_ms, int nowait, uint64_t upto)
{
    sp_drain_end why;
    if (!upto) {
        sp_lock();
        upto = R.submit_seq;
        sp_unlock();
    }
    return upto ? drain_upto(timeout_ms, nowait, upto, &why) : 0;
}

void sp_reaper_fork_child(int consistent)
{
    sp_actions_fork_child(consistent);
    sp_actions_fork_reset();
    memset(&R, 0, sizeof(R));
    sp_hold_reset();
    sp_streams_fork_child();
}
