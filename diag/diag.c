/*
 * diag.c - diagnostics: the codes, what is counted, the violations kept
 * for the report, the runtimes the report names, a diagnostic said with
 * its stacks (on safepin's own stack), the hazards prevented; diag's start
 * and fork handlers. The log: log.c; stacks captured: sites.c; the report:
 * report.c; the summary: summary.c; the history: history.c.
 */
#include "diag_internal.h"
#include "ownstack.h"
#include "registry.h"
#include "stack.h"
#include "suppress.h"
#include "symbolize.h"

#include <dlfcn.h>
#include <link.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

sp_stats sp_stat;

uintptr_t sp_diag_self_lo, sp_diag_self_hi; /* safepin's own loaded segments */
static pid_t diag_pid;             /* the process this state belongs to */
int sp_diag_forked_child;          /* this process was forked from one that ran safepin */

const sp_code_info sp_code_table[SP_CODE_COUNT] = {
#define SP_CODE(id, name, level, violation, desc) {name, level, violation, desc},
#include "codes.inc"
#undef SP_CODE
};

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    (void)arg;
    uintptr_t lo, hi;
    sp_phdr_span(info, 0, &lo, &hi);
    uintptr_t me = (uintptr_t)&sp_diag_init;
    if (me >= lo && me < hi) {
        sp_diag_self_lo = lo;
        sp_diag_self_hi = hi;
        return 1;
    }
    return 0;
}

void sp_diag_init(void)
{
    diag_pid = getpid();
    dl_iterate_phdr(find_self, NULL);
    sp_log_init();
    sp_report_init();
    sp_supp_init(); /* the suppressions files, read once, now */
    void *warm[2];
    backtrace(warm, 2); /* loads the unwinder now, not inside a hook */
    sp_stack_init();    /* then the walk that spares it most of the time */
    if (sp_opt.symbolize)
        sp_symbolize_init(); /* addr2line's path, found now */
}

int sp_diag_own_process(void) { return diag_pid != 0 && getpid() == diag_pid; }

/* ---- violations kept for the report ---------------------------------- */

kept_violation *sp_kept[SP_MAX_KEPT];
unsigned sp_kept_n;
static uint64_t violations_total;
/* guards sp_kept, sp_kept_n */
pthread_mutex_t sp_kept_lock = PTHREAD_MUTEX_INITIALIZER;

/* The frames of s that are shown (none: NULL), for the report. */
static sp_site *site_copy(const sp_site *s)
{
    if (!s || s->n <= 0)
        return NULL;
    size_t sz = sizeof(*s) + (size_t)s->n * sizeof(void *);
    sp_site *c = sp_mem_alloc(sz);
    if (c) {
        memcpy(c, s, sz);
        c->held = c->n;
        c->shared = 0;
    }
    return c;
}

/* Diagnostics counted on this thread: a hook compares it before and after
 * the program's call (runtime/api_error.c). */
__thread uint64_t sp_tls_diags __attribute__((tls_model("initial-exec")));

uint64_t sp_diag_thread_count(void) { return sp_tls_diags; }

/* Counts one occurrence of c (a violation, or not: leak_check=report);
 * returns how many there were. */
uint64_t sp_diag_count_code(sp_code c, int violation)
{
    sp_tls_diags++;
    if (violation)
        __atomic_add_fetch(&violations_total, 1, __ATOMIC_RELAXED);
    if (c == SP_RUNTIME_ERROR)
        SP_COUNT(runtime_errors);
    return __atomic_add_fetch(&sp_stat.code_count[c], 1, __ATOMIC_RELAXED);
}

uint64_t sp_violations(void) { return __atomic_load_n(&violations_total, __ATOMIC_RELAXED); }

/* ---- runtimes, for the report ---------------------------------------------- */

const char *sp_diag_rt_names[SP_DIAG_RT_MAX];
static const char *rt_prefix[SP_DIAG_RT_MAX];
const char *const *sp_diag_rt_bare[SP_DIAG_RT_MAX]; /* by sp_hazard, or NULL */
unsigned sp_diag_rt_used; /* atomic: bit rt */

void sp_diag_runtime_name(int rt, const char *name, const char *call_prefix,
                          const char *const *hazard_bare)
{
    if (rt >= 0 && rt < SP_DIAG_RT_MAX) {
        sp_diag_rt_names[rt] = name;
        rt_prefix[rt] = call_prefix;
        sp_diag_rt_bare[rt] = hazard_bare;
    }
}

void sp_diag_runtime_used(int rt)
{
    if (rt >= 0 && rt < SP_DIAG_RT_MAX)
        __atomic_fetch_or(&sp_diag_rt_used, 1u << rt, __ATOMIC_RELAXED);
}

/* The runtime whose call a message begins with ("cuMemHostUnregister(...").
 * The longest prefix wins. */
static int runtime_named_in(const char *msg)
{
    int best = -1;
    size_t best_len = 0;
    for (int i = 0; i < SP_DIAG_RT_MAX; i++) {
        size_t n = rt_prefix[i] ? strlen(rt_prefix[i]) : 0;
        if (n > best_len && strncmp(msg, rt_prefix[i], n) == 0) {
            best = i;
            best_len = n;
        }
    }
    return best;
}

static sp_module_stamp *stamps_of(const sp_site *s)
{
    int n = s ? (s->n < SP_SYM_MAX ? s->n : SP_SYM_MAX) : 0;
    sp_module_stamp *st = n > 0 ? sp_mem_alloc((size_t)n * sizeof(*st)) : NULL;
    for (int i = 0; st && i < n; i++)
        sp_symbolize_stamp(s->pc[i], &st[i]);
    return st;
}

/* Keeps a violation for the report (takes here); dropped if memory runs out. */
void sp_diag_keep_violation(sp_code c, const char *msg, sp_site *here, const sp_diag_range *r)
{
    if (here && here->n <= 0) { /* held only for suppressions: not shown */
        sp_site_free(here);
        here = NULL;
    }
    pthread_mutex_lock(&sp_kept_lock);
    int full = sp_kept_n >= SP_MAX_KEPT;
    pthread_mutex_unlock(&sp_kept_lock);
    if (full) {
        sp_site_free(here);
        return;
    }
    sp_site *reg = r ? site_copy(r->reg) : NULL;
    sp_site *unreg = r ? site_copy(r->unreg) : NULL;
    sp_module_stamp *st[3] = {stamps_of(here), stamps_of(reg), stamps_of(unreg)};
    pthread_mutex_lock(&sp_kept_lock);
    if (sp_kept_n < SP_MAX_KEPT) {
        kept_violation *k = sp_mem_calloc(1, sizeof(*k));
        if (k) {
            k->code = c;
            k->t_ns = sp_now_ns();
            snprintf(k->msg, sizeof(k->msg), "%s", msg);
            k->at = here;
            k->registered = reg;
            k->unregistered = unreg;
            k->at_st = st[0];
            k->registered_st = st[1];
            k->unregistered_st = st[2];
            here = reg = unreg = NULL;
            st[0] = st[1] = st[2] = NULL;
            /* The range's runtime, else the one whose call the message names. */
            k->rt = r && r->rt >= 0 ? r->rt : runtime_named_in(msg);
            if (r) {
                k->base = r->base;
                k->size = r->size;
            }
            sp_kept[sp_kept_n++] = k;
        }
    }
    pthread_mutex_unlock(&sp_kept_lock);
    sp_site_free(here);
    sp_site_free(reg);
    sp_site_free(unreg);
    for (int i = 0; i < 3; i++)
        sp_mem_free(st[i]);
}

/* gen_suppressions=1: the line that would silence this diagnostic. A leak
 * is named by where it was registered (its "at" stack is the exit path),
 * anything else by where it happened first. */
static void print_generated(sp_code c, const sp_site *here, const sp_diag_range *r)
{
    const sp_site *reg = r ? r->reg : NULL;
    const sp_site *stacks[2] = {here, reg};
    if (c == SP_LEAK_AT_EXIT) {
        stacks[0] = reg;
        stacks[1] = here;
    }
    char line[SP_SUPP_PATTERN_MAX + 64];
    if (sp_supp_generate(c, stacks, 2, sp_diag_self_lo, sp_diag_self_hi, line, sizeof(line)) == 0)
        sp_log_counted("gen-suppressions", "%s", line);
    else
        sp_log_counted("gen-suppressions",
                    "no frame outside safepin and the runtime libraries to name (backtrace=%ld); "
                    "'%s:*' would silence every %s",
                    sp_opt.backtrace, sp_code_table[c].name, sp_code_table[c].name);
}

/* The work of sp_diag, on safepin's stack; here (taken): the stack the
 * caller captured, or NULL. */
static void diag_body(sp_code c, const sp_diag_range *r, sp_site *here, const char *fmt,
                      va_list ap)
{
    sp_supp_flush(); /* what is wrong in the suppressions files comes first */
    /* leak_check=off: nothing said, nothing counted. */
    if (c == SP_LEAK_AT_EXIT && sp_opt.leak_mode == SP_LEAK_OFF) {
        sp_site_free(here);
        return;
    }
    int cancel; /* symbolizing reads, polls and waits: cancellation points */
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);

    /* Suppressed: counted as such, by suppression, and nothing else. A
     * leak's own stack is the exit path: where it was registered comes first. */
    if (sp_supp_wanted(c)) {
        const sp_site *reg = r ? r->reg : NULL;
        const sp_site *stacks[2] = {here, reg};
        if (c == SP_LEAK_AT_EXIT) {
            stacks[0] = reg;
            stacks[1] = here;
        }
        int s = sp_supp_match(c, stacks, 2);
        if (s >= 0) {
            sp_tls_diags++; /* safepin has had its say about this call */
            sp_supp_hit(s, c);
            sp_site_free(here);
            pthread_setcancelstate(cancel, NULL);
            return;
        }
    }

    /* leak_check=report: a leak is printed and counted, not a violation. */
    int violation = sp_code_table[c].violation &&
                    !(c == SP_LEAK_AT_EXIT && sp_opt.leak_mode == SP_LEAK_REPORT);
    uint64_t nth = sp_diag_count_code(c, violation);

    char msg[256];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    if (c == SP_LEAK_AT_EXIT && !violation) {
        size_t l = strlen(msg);
        snprintf(msg + l, sizeof(msg) - l, " (leak_check=report: not a violation)");
    }

    int print = sp_code_table[c].level <= sp_opt.log_level && nth <= (uint64_t)sp_opt.max_repeats;

    if (print) {
        sp_log_counted(sp_code_table[c].name, "%s", msg);
        if (here && here->n > 0)
            sp_log_print_pcs("at", here->pc, here->n, here->tid);
        if (r && r->reg && r->reg->n > 0) {
            const sp_site *s = r->reg;
            sp_log_print_pcs("registered at", s->pc, s->n, s->tid);
        }
        if (r && r->unreg && r->unreg->n > 0) {
            const sp_site *s = r->unreg;
            sp_log_print_pcs("unregistered/freed at", s->pc, s->n, s->tid);
        }
        if (violation && sp_opt.gen_suppressions)
            print_generated(c, here, r);
        if (nth == (uint64_t)sp_opt.max_repeats)
            sp_log_counted(sp_code_table[c].name,
                        "further reports of this code are counted, not printed");
    }

    if (violation)
        sp_diag_keep_violation(c, msg, here, r);
    else
        sp_site_free(here);
    pthread_setcancelstate(cancel, NULL);
}

/* Whether sp_diag(c) will want the stack where it is called: the caller
 * captures it, on its own stack, before the rest runs on safepin's. A code
 * past max_repeats that is no violation is not printed: no stack (a race
 * at that edge prints one line without its "at" stack). */
static int diag_wants_site(sp_code c)
{
    if (c == SP_LEAK_AT_EXIT && sp_opt.leak_mode == SP_LEAK_OFF)
        return 0;
    if (sp_supp_wanted(c))
        return 1; /* backtrace=0 too: held for matching, not shown */
    if (sp_opt.backtrace <= 0)
        return 0;
    return sp_code_table[c].violation ||
           (sp_code_table[c].level <= sp_opt.log_level &&
            SP_STAT(code_count[c]) < (uint64_t)sp_opt.max_repeats);
}

typedef struct diag_call {
    sp_code c;
    const sp_diag_range *r;
    sp_site *here;
    const char *fmt;
    va_list *ap;
    int hazard; /* a hazard-prevented line's kind (sp_hazard), or -1 */
} diag_call;

static void hazard_say(const diag_call *d);

static void diag_own(void *p)
{
    diag_call *d = p;
    if (d->hazard >= 0) {
        hazard_say(d);
        return;
    }
    va_list ap;
    va_copy(ap, *d->ap);
    diag_body(d->c, d->r, d->here, d->fmt, ap);
    va_end(ap);
}

/* The view of a range the diagnostics take (NULL for none). */
static const sp_diag_range *view_of(const struct sp_range *r, sp_diag_range *v)
{
    if (!r)
        return NULL;
    *v = (sp_diag_range){r->base, r->size, r->rt, sp_sites(r)->reg, sp_sites(r)->unreg};
    return v;
}

static void diag_go(sp_code c, const sp_diag_range *v, sp_site *here, const char *fmt, va_list ap)
{
    diag_call d = {c, v, here, fmt, NULL, -1};
    va_list aq;
    va_copy(aq, ap);
    d.ap = &aq;
    sp_call_on_own_stack(diag_own, &d);
    va_end(aq);
}

/* Codes said at the process's end (a leak, a release the drain did not
 * see through) have no "at" stack of their own: where the program was
 * then is its exit path, not where the range went wrong. */
static int diag_code_has_site(sp_code c)
{
    return c != SP_LEAK_AT_EXIT && c != SP_RELEASE_TIMEOUT;
}

/* noinline: sp_site_capture counts the frames above the program's. */
__attribute__((noinline)) void sp_diag(sp_code c, const struct sp_range *r, const char *fmt, ...)
{
    sp_diag_range v;
    sp_site *here = diag_code_has_site(c) && diag_wants_site(c) ? sp_diag_capture(c) : NULL;
    va_list ap;
    va_start(ap, fmt);
    diag_go(c, view_of(r, &v), here, fmt, ap);
    va_end(ap);
}

__attribute__((noinline)) void sp_diag_in(sp_code c, const sp_diag_range *r, const char *fmt, ...)
{
    sp_site *here = diag_code_has_site(c) && diag_wants_site(c) ? sp_diag_capture(c) : NULL;
    va_list ap;
    va_start(ap, fmt);
    diag_go(c, r, here, fmt, ap);
    va_end(ap);
}

__attribute__((noinline)) sp_site *sp_diag_site(sp_code c)
{
    return diag_wants_site(c) ? sp_diag_capture(c) : NULL;
}

void sp_diag_at(sp_code c, const struct sp_range *r, sp_site *here, const char *fmt, ...)
{
    sp_diag_range v;
    va_list ap;
    va_start(ap, fmt);
    diag_go(c, view_of(r, &v), here, fmt, ap);
    va_end(ap);
}

/* ---- hazards prevented ---------------------------------------------- */

const sp_hazard_info sp_hazard_table[SP_HZ_COUNT] = {
#define SP_HAZARD(id, name, did) {name, did},
#include "hazards.inc"
#undef SP_HAZARD
};
uint64_t sp_hazard_count[SP_HZ_COUNT]; /* atomic */

uint64_t sp_hazards_prevented(void)
{
    uint64_t n = 0;
    for (int h = 0; h < SP_HZ_COUNT; h++)
        n += __atomic_load_n(&sp_hazard_count[h], __ATOMIC_RELAXED);
    return n;
}

static void hazard_body(sp_code c, const sp_diag_range *r, sp_site *here, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void hazard_body(sp_code c, const sp_diag_range *r, sp_site *here, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag_body(c, r, here, fmt, ap);
    va_end(ap);
}

/* A hazard-prevented line, on safepin's stack (the program's may be small). */
static void hazard_say(const diag_call *d)
{
    char what[192];
    va_list ap;
    va_copy(ap, *d->ap);
    vsnprintf(what, sizeof(what), d->fmt, ap);
    va_end(ap);
    hazard_body(SP_HAZARD_PREVENTED, d->r, d->here, "%s: %s: %s", sp_hazard_table[d->hazard].name,
                what, sp_hazard_table[d->hazard].did);
}

/* noinline: sp_site_capture counts the frames above the program's. */
__attribute__((noinline)) void sp_hazard_prevented(sp_hazard h, const struct sp_range *r,
                                                   const char *fmt, ...)
{
    if ((unsigned)h >= SP_HZ_COUNT)
        return;
    __atomic_add_fetch(&sp_hazard_count[h], 1, __ATOMIC_RELAXED);
    sp_diag_range v;
    diag_call d = {SP_HAZARD_PREVENTED, view_of(r, &v),
                   diag_wants_site(SP_HAZARD_PREVENTED) ? sp_diag_capture(SP_HAZARD_PREVENTED)
                                                        : NULL,
                   fmt, NULL, (int)h};
    va_list ap;
    va_start(ap, fmt);
    d.ap = &ap;
    sp_call_on_own_stack(diag_own, &d);
    va_end(ap);
}

/* ---- fork ---------------------------------------------------------------- */

/* Fork handlers, called from safepin's own (interpose/init.c), which fix
 * the order of every lock of safepin's. */
void sp_diag_fork_prepare(void) { sp_symbolize_fork_prepare(); }

void sp_diag_fork_parent(void) { sp_symbolize_fork_parent(); }

/* The child starts with no violations, counters, history or latencies of
 * its parent (G9), and with fresh locks (the parent's other threads are
 * gone, maybe holding them). With %p in log_path, its log is its own file,
 * opened when it first says something. The records kept by the parent are
 * abandoned, not freed. */
void sp_diag_fork_child(int prepared)
{
    diag_pid = getpid();
    sp_diag_forked_child = 1;
    memset(&sp_stat, 0, sizeof(sp_stat));
    violations_total = 0;
    memset(sp_hazard_count, 0, sizeof(sp_hazard_count));
    sp_kept_n = 0;
    pthread_mutex_init(&sp_kept_lock, NULL);
    sp_history_fork_child();
    sp_supp_fork_child();
    sp_diag_lat_n = 0;
    sp_log_fork_child();
    sp_symbolize_fork_child(prepared);
}
