/*
 * diag.c - logging, diagnostics, counters, summary and report (the
 * history: history.c).
 */
#include "diag.h"
#include "ownstack.h"
#include "registry.h"
#include "stack.h"
#include "suppress.h"
#include "symbolize.h"

#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

sp_stats sp_stat;

static uintptr_t self_lo, self_hi; /* safepin's own loaded segments */
static pid_t diag_pid;             /* the process this state belongs to */
static int forked_child;           /* this process was forked from one that ran safepin */

/* The log. Without log_path it is stderr (fd 2). With it, a file safepin
 * opens itself when the first line is written (a process that says nothing
 * creates no file), close-on-exec, O_APPEND, on a high descriptor number.
 * Before every write the descriptor is checked to still be that file
 * (device, inode, flags): a program that closed it and got the number back
 * for a file of its own is never written to (G10); the log is opened again.
 * Paths are made absolute at start, so a later chdir changes nothing; %p is
 * expanded when the file is opened (a forked child opens its own). */
static char log_file[PATH_MAX];    /* "" : stderr */
static char report_file[PATH_MAX]; /* "" : no report */
static int log_fd = -1;            /* the open log file, -1: none yet (atomic) */
static dev_t log_dev;              /* its identity (atomic; racing openers agree) */
static ino_t log_ino;
static int log_failed;             /* log_path cannot be opened: stderr (atomic) */

static const struct {
    const char *name;
    int level;
    int violation;
    const char *desc;
} code_table[SP_CODE_COUNT] = {
#define SP_CODE(id, name, level, violation, desc) {name, level, violation, desc},
#include "codes.inc"
#undef SP_CODE
};


/* Expand %p to the pid. */
static void expand_path(const char *in, char *out, size_t n)
{
    size_t o = 0;
    for (const char *p = in; *p && o + 1 < n; p++) {
        if (p[0] == '%' && p[1] == 'p') {
            int w = snprintf(out + o, n - o, "%d", (int)getpid());
            if (w < 0)
                break;
            o += (size_t)w < n - o ? (size_t)w : n - o - 1;
            p++;
        } else {
            out[o++] = *p;
        }
    }
    out[o] = '\0';
}

/* in, relative to the current directory now, into out. */
static void make_absolute(const char *in, char *out, size_t n)
{
    out[0] = '\0';
    if (!in[0])
        return;
    size_t l = 0;
    if (in[0] != '/' && getcwd(out, n)) {
        l = strlen(out);
        if (l + 1 < n && (l == 0 || out[l - 1] != '/'))
            out[l++] = '/';
    }
    snprintf(out + l, n - l, "%s", in);
}

int sp_fd_move_high(int fd)
{
    if (fd < 0 || fd >= SP_FD_FLOOR)
        return fd;
    int h = fcntl(fd, F_DUPFD_CLOEXEC, SP_FD_FLOOR);
    if (h < 0)
        return fd; /* a low descriptor limit: keep the number we have */
    close(fd);
    return h;
}

static int log_is_ours(int fd)
{
    struct stat st;
    int fl = fcntl(fd, F_GETFD), st_fl = fcntl(fd, F_GETFL);
    return fl >= 0 && (fl & FD_CLOEXEC) && st_fl >= 0 && (st_fl & O_APPEND) &&
           fstat(fd, &st) == 0 && st.st_dev == __atomic_load_n(&log_dev, __ATOMIC_RELAXED) &&
           st.st_ino == __atomic_load_n(&log_ino, __ATOMIC_RELAXED);
}

/* The descriptor to write the log to (async-signal-safe). */
static int log_fd_get(void)
{
    if (!log_file[0] || __atomic_load_n(&log_failed, __ATOMIC_RELAXED))
        return 2;
    int fd = __atomic_load_n(&log_fd, __ATOMIC_ACQUIRE);
    if (fd >= 0 && log_is_ours(fd))
        return fd;
    char path[PATH_MAX];
    expand_path(log_file, path, sizeof(path));
    int nfd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    struct stat st;
    if (nfd < 0 || fstat(nfd, &st) != 0) {
        int err = errno;
        if (nfd >= 0)
            close(nfd);
        if (!__atomic_exchange_n(&log_failed, 1, __ATOMIC_RELAXED)) {
            char buf[PATH_MAX + 128];
            int w = snprintf(buf, sizeof(buf),
                             "==%d==safepin: options: cannot open log_path '%s': %s; "
                             "logging to stderr\n", (int)getpid(), path, strerror(err));
            if (w > 0)
                (void)!write(2, buf, (size_t)w < sizeof(buf) ? (size_t)w : sizeof(buf) - 1);
        }
        return 2;
    }
    nfd = sp_fd_move_high(nfd);
    __atomic_store_n(&log_dev, st.st_dev, __ATOMIC_RELAXED);
    __atomic_store_n(&log_ino, st.st_ino, __ATOMIC_RELAXED);
    if (!__atomic_compare_exchange_n(&log_fd, &fd, nfd, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        close(nfd); /* another thread opened it first */
        return fd;
    }
    return nfd;
}

void sp_log_write(const char *buf, size_t len)
{
    int fd = log_fd_get();
    while (fd >= 0 && len > 0) {
        ssize_t w = write(fd, buf, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return;
        }
        buf += w;
        len -= (size_t)w;
    }
}

static void write_all(const char *buf, size_t len) { sp_log_write(buf, len); }

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    (void)arg;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (a < lo)
            lo = a;
        if (a + ph->p_memsz > hi)
            hi = a + ph->p_memsz;
    }
    uintptr_t me = (uintptr_t)&sp_diag_init;
    if (me >= lo && me < hi) {
        self_lo = lo;
        self_hi = hi;
        return 1;
    }
    return 0;
}

void sp_diag_init(void)
{
    diag_pid = getpid();
    dl_iterate_phdr(find_self, NULL);
    make_absolute(sp_opt.log_path, log_file, sizeof(log_file));
    make_absolute(sp_opt.report, report_file, sizeof(report_file));
    sp_supp_init(); /* the suppressions files, read once, now */
    void *warm[2];
    backtrace(warm, 2); /* loads the unwinder now, not inside a hook */
    sp_stack_init();    /* then the walk that spares it most of the time */
    if (sp_opt.symbolize)
        sp_symbolize_init(); /* addr2line's path, found now */
}

int sp_diag_own_process(void) { return diag_pid != 0 && getpid() == diag_pid; }

/* ---- violations kept for the report ---------------------------------- */

#define SP_MAX_KEPT 256

typedef struct kept_violation {
    sp_code code;
    uint64_t t_ns;
    uintptr_t base;
    size_t size;
    char msg[256];
    int rt;                 /* the runtime (sp_diag_runtime_name's index), -1: none named */
    sp_site *at, *registered, *unregistered;
    /* Each frame's module when kept (or NULL): a frame whose module has
     * been unloaded since, maybe replaced at its address, gets no names. */
    sp_module_stamp *at_st, *registered_st, *unregistered_st;
} kept_violation;

static kept_violation *kept[SP_MAX_KEPT];
static unsigned kept_n;
static uint64_t violations_total;
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER; /* guards kept, kept_n */

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

static size_t prefix(char *buf, size_t n, const char *code)
{
    int w = snprintf(buf, n, "==%d==safepin: %s: ", (int)getpid(), code);
    return w < 0 ? 0 : ((size_t)w < n ? (size_t)w : n - 1);
}

static void keep_violation(sp_code c, const char *msg, sp_site *here, const sp_diag_range *r);
static sp_site *diag_capture(sp_code c);

/* Diagnostics counted on this thread: a hook compares it before and after
 * the program's call (runtime/api_error.c). */
static __thread uint64_t tls_diags __attribute__((tls_model("initial-exec")));

uint64_t sp_diag_thread_count(void) { return tls_diags; }

/* Counts one occurrence of c (a violation, or not: leak_check=report);
 * returns how many there were. */
static uint64_t count_code(sp_code c, int violation)
{
    tls_diags++;
    if (violation)
        __atomic_add_fetch(&violations_total, 1, __ATOMIC_RELAXED);
    if (c == SP_RUNTIME_ERROR)
        SP_COUNT(runtime_errors);
    return __atomic_add_fetch(&sp_stat.code_count[c], 1, __ATOMIC_RELAXED);
}

/* One log line; counted: it is also counted as a runtime-error, here (taken)
 * its stack, captured by the caller on its own stack. Runs on safepin's
 * stack (sp_log switches). */
static void vlog(int print, int counted, const char *code, sp_site *here, const char *fmt,
                 va_list ap)
{
    int cancel; /* write() is a cancellation point; callers may hold locks */
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
    char buf[1024];
    size_t at = prefix(buf, sizeof(buf), code), o = at;
    int w = vsnprintf(buf + o, sizeof(buf) - o, fmt, ap);
    if (w > 0)
        o += (size_t)w < sizeof(buf) - o ? (size_t)w : sizeof(buf) - o - 1;
    if (o >= sizeof(buf) - 1)
        o = sizeof(buf) - 2;
    buf[o++] = '\n';
    if (counted && sp_supp_wanted(SP_RUNTIME_ERROR)) {
        const sp_site *stacks[1] = {here};
        int s = sp_supp_match(SP_RUNTIME_ERROR, stacks, 1);
        if (s >= 0) {
            sp_site_free(here);
            tls_diags++;
            sp_supp_hit(s, SP_RUNTIME_ERROR);
            pthread_setcancelstate(cancel, NULL);
            return;
        }
    }
    if (print)
        write_all(buf, o);
    if (counted) {
        buf[o - 1] = '\0';
        count_code(SP_RUNTIME_ERROR, 1);
        keep_violation(SP_RUNTIME_ERROR, buf + at, here, NULL);
    } else {
        sp_site_free(here);
    }
    pthread_setcancelstate(cancel, NULL);
}

/* The work of a log line or a diagnostic, handed to safepin's own stack:
 * the arguments stay where the caller put them (its va_list points there). */
typedef struct log_call {
    int print, counted;
    const char *code;
    sp_site *here;
    const char *fmt;
    va_list *ap;
} log_call;

static void vlog_own(void *p)
{
    log_call *l = p;
    va_list ap;
    va_copy(ap, *l->ap);
    vlog(l->print, l->counted, l->code, l->here, l->fmt, ap);
    va_end(ap);
}

__attribute__((noinline)) void sp_log(int level, const char *code, const char *fmt, ...)
{
    /* A runtime-error line counts as that code (codes, counters and
     * violations): one count per line, printed or not. */
    int counted = strcmp(code, code_table[SP_RUNTIME_ERROR].name) == 0;
    int print = level <= sp_opt.log_level || !sp_opt.log[0];
    if (!print && !counted)
        return;
    log_call l = {print, counted, code, counted ? diag_capture(SP_RUNTIME_ERROR) : NULL, fmt, NULL};
    va_list ap;
    va_start(ap, fmt);
    l.ap = &ap;
    sp_call_on_own_stack(vlog_own, &l);
    va_end(ap);
}

/* A line of a diagnostic sp_diag has counted already. */
static void log_counted(const char *code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void log_counted(const char *code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(1, 0, code, NULL, fmt, ap);
    va_end(ap);
}

static void print_pcs(const char *what, void *const *pc, int n, pid_t tid)
{
    char buf[512];
    int w = snprintf(buf, sizeof(buf), "  %s (thread %d):\n", what, (int)tid);
    if (w > 0)
        write_all(buf, (size_t)w);
    if (n > SP_SYM_MAX)
        n = SP_SYM_MAX;
    if (n <= 0)
        return;
    sp_frame_info fi[n];
    sp_symbolize(pc, n, fi);
    for (int i = 0; i < n; i++) {
        w = sp_format_frame(buf, sizeof(buf), i, pc[i], &fi[i]);
        if (w > 0)
            write_all(buf, (size_t)w < sizeof(buf) ? (size_t)w : sizeof(buf) - 1);
    }
}

/* Frames of safepin itself at the top of a stack are not shown. */
static int first_foreign_frame(void *const *pc, int n)
{
    if (!self_hi)
        return 0;
    /* Skip up to the last of safepin's own frames near the top (a sanitizer
     * runtime's backtrace interceptor may stand above them). */
    int last = -1;
    for (int i = 0; i < n && i < 16; i++)
        if ((uintptr_t)pc[i] >= self_lo && (uintptr_t)pc[i] < self_hi)
            last = i;
    return last + 1 >= n ? 0 : last + 1;
}

#define SP_MAX_FRAMES 64

/* Sites that show no frame (backtrace=0), held only for suppressions, are
 * shared: a program registers from a few places, so each distinct stack is
 * allocated once and kept for the process's life, and a registration costs
 * no memory of its own for it. Slots go from NULL to a site, never back. At
 * most SHARED_MAX distinct stacks: past that each capture gets its own. */
#define SHARED_MAX 1024
#define SHARED_PROBES 16
static sp_site *shared_sites[SHARED_MAX]; /* atomic */

static int same_frames(const sp_site *s, void *const *pc, int n)
{
    return s->held == n && memcmp(s->pc, pc, (size_t)n * sizeof(void *)) == 0;
}

/* The shared site of pc[0..n) (found, or made now), or NULL when out of
 * memory; a full table: a site of the caller's own. */
static sp_site *shared_site(void *const *pc, int n)
{
    uint64_t h = 14695981039346656037ull; /* FNV-1a over the pcs */
    for (int i = 0; i < n; i++)
        h = (h ^ (uintptr_t)pc[i]) * 1099511628211ull;
    sp_site *mine = NULL;
    for (unsigned k = 0; k < SHARED_PROBES; k++) {
        sp_site **slot = &shared_sites[(h + k) % SHARED_MAX];
        sp_site *s = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
        if (!s) {
            if (!mine) {
                mine = sp_mem_alloc(sizeof(*mine) + (size_t)n * sizeof(void *));
                if (!mine)
                    return NULL;
                *mine = (sp_site){.tid = (pid_t)sp_gettid(), .n = 0, .held = n, .shared = 1};
                memcpy(mine->pc, pc, (size_t)n * sizeof(void *));
            }
            if (__atomic_compare_exchange_n(slot, &s, mine, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
                return mine;
            /* another thread's went there: s is it */
        }
        if (same_frames(s, pc, n)) {
            sp_mem_free(mine);
            return s;
        }
    }
    if (mine)
        mine->shared = 0; /* the table is full around h: the caller's own */
    return mine;
}

/* own: at most this many of safepin's frames stand above the program's;
 * hold: frames held for suppressions to match (0: none beyond those shown,
 * the backtrace option's). */
static inline __attribute__((always_inline)) sp_site *capture(int own, int hold)
{
    int show = sp_opt.backtrace > 0 ? (int)sp_opt.backtrace : 0;
    int want = show > hold ? show : hold;
    if (want <= 0)
        return NULL;
    void *pc[SP_MAX_FRAMES + 8];
    int n = sp_stack_walk(pc, want + own);
    if (n < 0) {
        SP_COUNT(stacks_unwound);
        n = backtrace(pc, want + own); /* what the walk cannot vouch for */
    }
    int skip = first_foreign_frame(pc, n);
    int keep = n - skip;
    if (keep > want)
        keep = want;
    if (show == 0)
        return keep > 0 ? shared_site(pc + skip, keep) : NULL;
    sp_site *s = sp_mem_alloc(sizeof(*s) + (size_t)keep * sizeof(void *));
    if (!s)
        return NULL;
    s->t_ns = sp_now_ns();
    s->tid = (pid_t)sp_gettid();
    s->n = keep < show ? keep : show;
    s->held = keep;
    s->shared = 0;
    memcpy(s->pc, pc + skip, (size_t)keep * sizeof(void *));
    return s;
}

/* noinline: the frame counts below hold only if each is a frame of its own. */
__attribute__((noinline)) sp_site *sp_site_capture(void) { return capture(8, 0); }
__attribute__((noinline)) sp_site *sp_site_capture_entry(void) { return capture(4, 0); }
__attribute__((noinline)) sp_site *sp_site_capture_register(void)
{
    return capture(4, sp_supp_any() ? SP_SUPP_FRAMES : 0);
}
/* Where a diagnostic of code c happens (sp_diag_site, sp_diag, sp_log):
 * held for suppressions of c too. */
__attribute__((noinline)) static sp_site *diag_capture(sp_code c)
{
    return capture(8, sp_supp_wanted(c) ? SP_SUPP_FRAMES : 0);
}

void sp_site_free(sp_site *s)
{
    if (s && !s->shared)
        sp_mem_free(s);
}

uint64_t sp_violations(void) { return __atomic_load_n(&violations_total, __ATOMIC_RELAXED); }

/* Keeps a violation for the report (takes here); dropped if memory runs out. */
/* ---- runtimes, for the report ---------------------------------------------- */

#define SP_DIAG_RT_MAX 4
static const char *rt_names[SP_DIAG_RT_MAX];
static const char *rt_prefix[SP_DIAG_RT_MAX];
static const char *const *rt_bare[SP_DIAG_RT_MAX]; /* by sp_hazard, or NULL */
static unsigned rt_used; /* atomic: bit rt */

void sp_diag_runtime_name(int rt, const char *name, const char *call_prefix,
                          const char *const *hazard_bare)
{
    if (rt >= 0 && rt < SP_DIAG_RT_MAX) {
        rt_names[rt] = name;
        rt_prefix[rt] = call_prefix;
        rt_bare[rt] = hazard_bare;
    }
}

void sp_diag_runtime_used(int rt)
{
    if (rt >= 0 && rt < SP_DIAG_RT_MAX)
        __atomic_fetch_or(&rt_used, 1u << rt, __ATOMIC_RELAXED);
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

static void keep_violation(sp_code c, const char *msg, sp_site *here, const sp_diag_range *r)
{
    if (here && here->n <= 0) { /* held only for suppressions: not shown */
        sp_site_free(here);
        here = NULL;
    }
    pthread_mutex_lock(&kept_lock);
    int full = kept_n >= SP_MAX_KEPT;
    pthread_mutex_unlock(&kept_lock);
    if (full) {
        sp_site_free(here);
        return;
    }
    sp_site *reg = r ? site_copy(r->reg) : NULL;
    sp_site *unreg = r ? site_copy(r->unreg) : NULL;
    sp_module_stamp *st[3] = {stamps_of(here), stamps_of(reg), stamps_of(unreg)};
    pthread_mutex_lock(&kept_lock);
    if (kept_n < SP_MAX_KEPT) {
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
            kept[kept_n++] = k;
        }
    }
    pthread_mutex_unlock(&kept_lock);
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
    if (sp_supp_generate(c, stacks, 2, self_lo, self_hi, line, sizeof(line)) == 0)
        log_counted("gen-suppressions", "%s", line);
    else
        log_counted("gen-suppressions",
                    "no frame outside safepin and the runtime libraries to name (backtrace=%ld); "
                    "'%s:*' would silence every %s",
                    sp_opt.backtrace, code_table[c].name, code_table[c].name);
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
            tls_diags++; /* safepin has had its say about this call */
            sp_supp_hit(s, c);
            sp_site_free(here);
            pthread_setcancelstate(cancel, NULL);
            return;
        }
    }

    /* leak_check=report: a leak is printed and counted, not a violation. */
    int violation = code_table[c].violation &&
                    !(c == SP_LEAK_AT_EXIT && sp_opt.leak_mode == SP_LEAK_REPORT);
    uint64_t nth = count_code(c, violation);

    char msg[256];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    if (c == SP_LEAK_AT_EXIT && !violation) {
        size_t l = strlen(msg);
        snprintf(msg + l, sizeof(msg) - l, " (leak_check=report: not a violation)");
    }

    int print = code_table[c].level <= sp_opt.log_level && nth <= (uint64_t)sp_opt.max_repeats;

    if (print) {
        log_counted(code_table[c].name, "%s", msg);
        if (here && here->n > 0)
            print_pcs("at", here->pc, here->n, here->tid);
        if (r && r->reg && r->reg->n > 0) {
            const sp_site *s = r->reg;
            print_pcs("registered at", s->pc, s->n, s->tid);
        }
        if (r && r->unreg && r->unreg->n > 0) {
            const sp_site *s = r->unreg;
            print_pcs("unregistered/freed at", s->pc, s->n, s->tid);
        }
        if (violation && sp_opt.gen_suppressions)
            print_generated(c, here, r);
        if (nth == (uint64_t)sp_opt.max_repeats)
            log_counted(code_table[c].name,
                        "further reports of this code are counted, not printed");
    }

    if (violation)
        keep_violation(c, msg, here, r);
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
    return code_table[c].violation ||
           (code_table[c].level <= sp_opt.log_level &&
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
    sp_site *here = diag_code_has_site(c) && diag_wants_site(c) ? diag_capture(c) : NULL;
    va_list ap;
    va_start(ap, fmt);
    diag_go(c, view_of(r, &v), here, fmt, ap);
    va_end(ap);
}

__attribute__((noinline)) void sp_diag_in(sp_code c, const sp_diag_range *r, const char *fmt, ...)
{
    sp_site *here = diag_code_has_site(c) && diag_wants_site(c) ? diag_capture(c) : NULL;
    va_list ap;
    va_start(ap, fmt);
    diag_go(c, r, here, fmt, ap);
    va_end(ap);
}

__attribute__((noinline)) sp_site *sp_diag_site(sp_code c)
{
    return diag_wants_site(c) ? diag_capture(c) : NULL;
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

static const struct {
    const char *name, *did;
} hazard_table[SP_HZ_COUNT] = {
#define SP_HAZARD(id, name, did) {name, did},
#include "hazards.inc"
#undef SP_HAZARD
};
static uint64_t hazard_count[SP_HZ_COUNT]; /* atomic */

uint64_t sp_hazards_prevented(void)
{
    uint64_t n = 0;
    for (int h = 0; h < SP_HZ_COUNT; h++)
        n += __atomic_load_n(&hazard_count[h], __ATOMIC_RELAXED);
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
    hazard_body(SP_HAZARD_PREVENTED, d->r, d->here, "%s: %s: %s", hazard_table[d->hazard].name,
                what, hazard_table[d->hazard].did);
}

/* noinline: sp_site_capture counts the frames above the program's. */
__attribute__((noinline)) void sp_hazard_prevented(sp_hazard h, const struct sp_range *r,
                                                   const char *fmt, ...)
{
    if ((unsigned)h >= SP_HZ_COUNT)
        return;
    __atomic_add_fetch(&hazard_count[h], 1, __ATOMIC_RELAXED);
    sp_diag_range v;
    diag_call d = {SP_HAZARD_PREVENTED, view_of(r, &v),
                   diag_wants_site(SP_HAZARD_PREVENTED) ? diag_capture(SP_HAZARD_PREVENTED) : NULL,
                   fmt, NULL, (int)h};
    va_list ap;
    va_start(ap, fmt);
    d.ap = &ap;
    sp_call_on_own_stack(diag_own, &d);
    va_end(ap);
}

/* ---- release latencies ---------------------------------------------- */

#define SP_LAT_MAX 65536
static uint64_t lat[SP_LAT_MAX];
static uint64_t lat_n;

void sp_record_latency(uint64_t unregister_call_ns, uint64_t done_ns)
{
    uint64_t i = __atomic_fetch_add(&lat_n, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&lat[i % SP_LAT_MAX], done_ns - unregister_call_ns, __ATOMIC_RELAXED);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* ---- end of run ------------------------------------------------------- */

static void pct(uint64_t *v, uint64_t n, double *p50, double *p90, double *p99, double *max)
{
    *p50 = *p90 = *p99 = *max = 0;
    if (!n)
        return;
    qsort(v, n, sizeof(*v), cmp_u64);
    *p50 = v[(n - 1) * 50 / 100] / 1e3;
    *p90 = v[(n - 1) * 90 / 100] / 1e3;
    *p99 = v[(n - 1) * 99 / 100] / 1e3;
    *max = v[n - 1] / 1e3;
}

/* The report's writer: formatted into a static buffer and written with
 * write(2), no stdio and no allocation, so a fatal signal's handler can
 * write the report too. One writer at a time (report_lock). */
typedef struct rout {
    int fd;
    int err;
    size_t n;
    char buf[8192];
} rout;

static void rflush(rout *f)
{
    size_t off = 0;
    int waits = 0; /* a pipe's reader gets 5 s to take each buffer */
    while (off < f->n && !f->err) {
        ssize_t w = write(f->fd, f->buf + off, f->n - off);
        if (w > 0) {
            off += (size_t)w;
            waits = 0;
        } else if (w < 0 && errno == EINTR) {
            continue;
        } else if (w < 0 && errno == EAGAIN && waits++ < 5000) {
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
        } else {
            f->err = w < 0 ? errno : EIO;
        }
    }
    f->n = 0;
}

static void rwrite(rout *f, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        if (f->n == sizeof(f->buf))
            rflush(f);
        size_t k = sizeof(f->buf) - f->n < n ? sizeof(f->buf) - f->n : n;
        memcpy(f->buf + f->n, c, k);
        f->n += k;
        c += k;
        n -= k;
    }
}

static void rprintf(rout *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void rprintf(rout *f, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (w > 0)
        rwrite(f, line, (size_t)w < sizeof(line) ? (size_t)w : sizeof(line) - 1);
}

static void json_str(rout *f, const char *s);

/* Every frame of the kept violations' stacks, symbolized in one batch: one
 * addr2line run per module for the whole report, not one per stack. */
typedef struct frame_key {
    void *pc;
    unsigned char adj; /* a return address: every frame of a site */
} frame_key;
typedef struct frame_table {
    size_t n;
    frame_key *key; /* sorted, unique */
    sp_frame_info *fi;
    int dying; /* a fatal signal's report: the post-mortem's frames (sp_pm_frame) */
} frame_table;

static int frame_key_cmp(const void *a, const void *b)
{
    const frame_key *x = a, *y = b;
    if (x->pc != y->pc)
        return (uintptr_t)x->pc < (uintptr_t)y->pc ? -1 : 1;
    return (int)x->adj - (int)y->adj;
}

static size_t add_site_keys(frame_key *key, size_t n, const sp_site *s)
{
    for (int i = 0; s && i < s->n && i < SP_SYM_MAX; i++)
        key[n++] = (frame_key){s->pc[i], 1};
    return n;
}

/* The table for kept[0..kept_n) (kept_lock held); t->n = 0 when it cannot be
 * built: each stack is then symbolized on its own. */
static void frame_table_build(frame_table *t)
{
    size_t most = 0, n = 0;
    *t = (frame_table){0};
    for (unsigned i = 0; i < kept_n; i++)
        most += 3 * SP_SYM_MAX;
    frame_key *key = most ? sp_mem_alloc(most * sizeof(*key)) : NULL;
    if (!key)
        return;
    for (unsigned i = 0; i < kept_n; i++) {
        n = add_site_keys(key, n, kept[i]->at);
        n = add_site_keys(key, n, kept[i]->registered);
        n = add_site_keys(key, n, kept[i]->unregistered);
    }
    qsort(key, n, sizeof(*key), frame_key_cmp);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (u == 0 || frame_key_cmp(&key[u - 1], &key[i]) != 0)
            key[u++] = key[i];
    void **pc = sp_mem_alloc((u ? u : 1) * sizeof(*pc));
    unsigned char *adj = sp_mem_alloc(u ? u : 1);
    sp_frame_info *fi = sp_mem_alloc((u ? u : 1) * sizeof(*fi));
    if (pc && adj && fi) {
        for (size_t i = 0; i < u; i++) {
            pc[i] = key[i].pc;
            adj[i] = key[i].adj;
        }
        if (u <= INT_MAX && sp_symbolize_many(pc, adj, (int)u, fi) == 0)
            *t = (frame_table){u, key, fi, 0};
    }
    sp_mem_free(pc);
    sp_mem_free(adj);
    if (!t->n) { /* no frame at all (backtrace=0), or out of memory */
        sp_mem_free(key);
        sp_mem_free(fi);
        *t = (frame_table){0};
    }
}

static void frame_table_free(frame_table *t)
{
    sp_mem_free(t->key);
    sp_mem_free(t->fi);
}

/* The frames of s into fi: from the table, or symbolized now; a frame whose
 * module is no longer the one stamped when s was kept gets no names. */
static void site_frames(const frame_table *t, const sp_site *s, const sp_module_stamp *st, int n,
                        sp_frame_info *fi)
{
    int i;
    for (i = 0; i < n; i++) {
        frame_key k = {s->pc[i], 1};
        const frame_key *hit = t->n ? bsearch(&k, t->key, t->n, sizeof(k), frame_key_cmp) : NULL;
        if (!hit)
            break;
        fi[i] = t->fi[hit - t->key];
    }
    if (i < n)
        sp_symbolize(s->pc, n, fi);
    for (i = 0; st && i < n; i++) {
        sp_module_stamp now;
        sp_symbolize_stamp(s->pc[i], &now);
        if (now.fbase != st[i].fbase || now.path_hash != st[i].path_hash)
            memset(&fi[i], 0, sizeof(fi[i]));
    }
}

static void json_frame(rout *f, int i, void *pc, const sp_frame_info *fi)
{
    rprintf(f, "%s{\"pc\": \"%p\", \"function\": ", i ? ", " : "", pc);
    json_str(f, fi->func);
    rprintf(f, ", \"file\": ");
    json_str(f, fi->file);
    rprintf(f, ", \"line\": %d, \"module\": ", fi->line);
    json_str(f, fi->module);
    rprintf(f, ", \"offset\": \"0x%lx\"}", (unsigned long)fi->module_offset);
}

static void json_site(rout *f, const char *key, const sp_site *s, const sp_module_stamp *st,
                      const frame_table *t)
{
    rprintf(f, "\"%s\": ", key);
    if (!s) {
        rprintf(f, "null");
        return;
    }
    int n = s->n < SP_SYM_MAX ? s->n : SP_SYM_MAX;
    rprintf(f, "{\"thread\": %d, \"frames\": [", (int)s->tid);
    if (t->dying) {
        /* Frame by frame, on whatever stack the signal left. */
        static sp_frame_info one;
        for (int i = 0; i < n; i++) {
            const sp_frame_info *x = sp_pm_frame(s->pc[i]);
            if (!x) {
                sp_symbolize_plain(s->pc[i], &one);
                x = &one;
            }
            json_frame(f, i, s->pc[i], x);
        }
    } else {
        sp_frame_info fi[n > 0 ? n : 1];
        site_frames(t, s, st, n, fi);
        for (int i = 0; i < n; i++)
            json_frame(f, i, s->pc[i], &fi[i]);
    }
    rprintf(f, "]}");
}

/* Length of the valid UTF-8 sequence at s (1 to 4), or 0. */
static int utf8_len(const unsigned char *s)
{
    unsigned c = s[0], cp, min;
    int n;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2, min = 0x80;
    else if ((c & 0xf0) == 0xe0)
        n = 3, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4, min = 0x10000;
    else
        return 0;
    cp = c & (0x7fu >> n);
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

/* s as a JSON string. Paths and names need not be UTF-8: a byte that is
 * not part of valid UTF-8 is written as the character of that number
 * (\u00XX, its Latin-1 reading), so the report stays valid JSON. */
static void json_str(rout *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    rwrite(f, "\"", 1);
    while (*p) {
        int n = utf8_len(p);
        if (*p == '"' || *p == '\\')
            rprintf(f, "\\%c", *p);
        else if (*p < 0x20 || n == 0)
            rprintf(f, "\\u%04x", *p);
        else
            rwrite(f, p, (size_t)n);
        p += n ? n : 1;
    }
    rwrite(f, "\"", 1);
}

/* A forked child whose report would replace its parent's (no %p in the
 * path) writes it only when it has something to say. */
static int report_wanted(void)
{
    if (!report_file[0])
        return 0;
    if (!forked_child || strstr(report_file, "%p"))
        return 1;
    if (sp_violations() || SP_STAT(registrations))
        return 1;
    for (int c = 0; c < SP_CODE_COUNT; c++)
        if (SP_STAT(code_count[c]))
            return 1;
    return 0;
}

/* The leak policy and what suppressions silenced: in all, by code, and by
 * suppression (those used, in the order they were read). */
static void write_suppressed(rout *f)
{
    rprintf(f, "  \"leak_check\": ");
    json_str(f, sp_opt.leak_check);
    rprintf(f, ",\n  \"suppressed_total\": %llu,\n  \"suppressed\": {",
            (unsigned long long)sp_supp_suppressed_total());
    for (int c = 0, n = 0; c < SP_CODE_COUNT; c++)
        if (sp_supp_suppressed_code(c))
            rprintf(f, "%s\"%s\": %llu", n++ ? ", " : "", code_table[c].name,
                    (unsigned long long)sp_supp_suppressed_code(c));
    rprintf(f, "},\n  \"suppressions_used\": [");
    int n = 0;
    for (int i = 0; i < sp_supp_count(); i++) {
        const sp_supp *e = sp_supp_get(i);
        uint64_t hits = __atomic_load_n(&e->hits, __ATOMIC_RELAXED);
        if (!hits)
            continue;
        rprintf(f, "%s\n    {\"code\": \"%s\", \"pattern\": ", n++ ? "," : "",
                e->code == SP_SUPP_CODE_ANY ? "*" : code_table[e->code].name);
        json_str(f, e->pattern);
        rprintf(f, ", \"file\": ");
        json_str(f, e->is_default ? "default" : sp_supp_source(e->source));
        rprintf(f, ", \"line\": %u, \"count\": %llu}", e->line, (unsigned long long)hits);
    }
    rprintf(f, "%s],\n", n ? "\n  " : "");
}

static rout report_out;
static int report_busy; /* atomic: a report is being written */

/* The report; sig: the fatal signal whose handler writes it (0: the
 * process's end), its frames then symbolized as the post-mortem's are. */
static void write_report(int exit_status, int sig, double p50, double p90, double p99,
                         double max, uint64_t nlat)
{
    if (__atomic_exchange_n(&report_busy, 1, __ATOMIC_ACQ_REL))
        return; /* a fatal signal while the report was written: that one stands */
    char path[PATH_MAX], tmp[PATH_MAX + 32];
    expand_path(report_file, path, sizeof(path));
    /* Written aside and renamed into place: a report is whole or absent,
     * even when two processes (a parent and its forked child, without %p in
     * report=) finish at once; the last one to finish is the one kept.
     * Anything but a regular file (a device, a pipe) is written in place. */
    struct stat st;
    int aside = stat(path, &st) != 0 || S_ISREG(st.st_mode);
    if (aside)
        snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
    /* Never blocking: a FIFO nobody reads is refused (ENXIO), not waited on. */
    int fd = open(aside ? tmp : path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NONBLOCK, 0666);
    if (fd < 0) {
        sp_log(SP_LOG_ERROR, "report", "cannot write report '%s': %s", path, strerror(errno));
        __atomic_store_n(&report_busy, 0, __ATOMIC_RELEASE);
        return;
    }
    rout *f = &report_out;
    f->fd = fd;
    f->err = 0;
    f->n = 0;
    rprintf(f, "{\n  \"tool\": \"safepin\",\n  \"version\": \"%s\",\n  \"schema\": 1,\n  \"pid\": %d,\n",
            SAFEPIN_VERSION, (int)getpid());
    /* Which runtimes the program used (one library serves HIP and CUDA). */
    rprintf(f, "  \"runtimes\": [");
    unsigned used = __atomic_load_n(&rt_used, __ATOMIC_RELAXED);
    for (int i = 0, n = 0; i < SP_DIAG_RT_MAX; i++)
        if ((used & 1u << i) && rt_names[i])
            rprintf(f, "%s\"%s\"", n++ ? ", " : "", rt_names[i]);
    rprintf(f, "],\n");
    if (sig)
        rprintf(f, "  \"signal\": %d,\n", sig);
    rprintf(f, "  \"exit_status\": %d,\n  \"violations_total\": %llu,\n", exit_status,
            (unsigned long long)sp_violations());
    rprintf(f, "  \"counters\": {\n");
    const char *sep = "";
#define SP_COUNTER(x)                                                           \
    rprintf(f, "%s    \"%s\": %llu", sep, #x, (unsigned long long)SP_STAT(x));    \
    sep = ",\n";
#include "counters.inc"
#undef SP_COUNTER
    rprintf(f, "\n  },\n");
    rprintf(f, "  \"codes\": {");
    for (int c = 0; c < SP_CODE_COUNT; c++)
        rprintf(f, "%s\"%s\": %llu", c ? ", " : "", code_table[c].name,
                (unsigned long long)SP_STAT(code_count[c]));
    rprintf(f, "},\n");
    rprintf(f, "  \"hazards_prevented\": {");
    for (int h = 0, n = 0; h < SP_HZ_COUNT; h++) {
        uint64_t k = __atomic_load_n(&hazard_count[h], __ATOMIC_RELAXED);
        if (k)
            rprintf(f, "%s\"%s\": %llu", n++ ? ", " : "", hazard_table[h].name,
                    (unsigned long long)k);
    }
    rprintf(f, "},\n");
    write_suppressed(f);
    rprintf(f, "  \"release_latency_us\": {\"count\": %llu, \"p50\": %.1f, \"p90\": %.1f, "
               "\"p99\": %.1f, \"max\": %.1f},\n",
            (unsigned long long)nlat, p50, p90, p99, max);
    rprintf(f, "  \"violations\": [");
    /* Bounded: exit() from a signal handler that interrupted a diagnostic on
     * this thread finds the lock its own; the report then lists none. */
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 1;
    int locked = pthread_mutex_timedlock(&kept_lock, &until) == 0;
    frame_table frames = {0};
    if (locked && sig) {
        /* Every frame of the kept stacks in the post-mortem's one batch. */
        for (unsigned i = 0; i < kept_n; i++) {
            const sp_site *ss[3] = {kept[i]->at, kept[i]->registered, kept[i]->unregistered};
            for (int k = 0; k < 3; k++)
                for (int j = 0; ss[k] && j < ss[k]->n && j < SP_SYM_MAX; j++)
                    sp_pm_add(ss[k]->pc[j]);
        }
        sp_pm_symbolize(sp_now_ns() + 5000000000ull);
        frames.dying = 1;
    } else if (locked) {
        frame_table_build(&frames);
    }
    for (unsigned i = 0; locked && i < kept_n; i++) {
        kept_violation *k = kept[i];
        rprintf(f, "%s\n    {\"code\": \"%s\", ", i ? "," : "", code_table[k->code].name);
        if (k->rt >= 0 && k->rt < SP_DIAG_RT_MAX && rt_names[k->rt])
            rprintf(f, "\"runtime\": \"%s\", ", rt_names[k->rt]);
        rprintf(f, "\"message\": ");
        json_str(f, k->msg);
        rprintf(f, ", \"base\": \"0x%lx\", \"size\": %zu, ", (unsigned long)k->base, k->size);
        json_site(f, "at", k->at, k->at_st, &frames);
        rprintf(f, ", ");
        json_site(f, "registered", k->registered, k->registered_st, &frames);
        rprintf(f, ", ");
        json_site(f, "unregistered", k->unregistered, k->unregistered_st, &frames);
        rprintf(f, "}");
    }
    frame_table_free(&frames);
    if (locked)
        pthread_mutex_unlock(&kept_lock);
    rprintf(f, "%s]\n}\n", locked && kept_n ? "\n  " : "");
    rflush(f);
    int err = f->err;
    if (close(fd) != 0 && !err && errno != EINTR)
        err = errno ? errno : EIO;
    if (!err && aside && rename(tmp, path) != 0)
        err = errno ? errno : EIO;
    if (err) {
        if (aside)
            unlink(tmp);
        sp_log(SP_LOG_ERROR, "report", "cannot write report '%s': %s", path, strerror(err));
    }
    __atomic_store_n(&report_busy, 0, __ATOMIC_RELEASE);
}

/* The summary's hazards: how many, by kind, and what the runtimes the
 * program used do without safepin (each face's hazard_bare). */
static void say_hazards(void)
{
    uint64_t total = sp_hazards_prevented();
    if (!total)
        return;
    char line[512];
    size_t o = 0;
    for (int h = 0; h < SP_HZ_COUNT; h++) {
        uint64_t n = __atomic_load_n(&hazard_count[h], __ATOMIC_RELAXED);
        int w = n ? snprintf(line + o, sizeof(line) - o, "%s%llu %s", o ? ", " : "",
                             (unsigned long long)n, hazard_table[h].name)
                  : 0;
        if (w < 0 || (size_t)w >= sizeof(line) - o)
            break;
        o += (size_t)w;
    }
    sp_log(SP_LOG_ERROR, "summary", "%llu hazard%s prevented: %s", (unsigned long long)total,
           total == 1 ? "" : "s", line);
    unsigned used = __atomic_load_n(&rt_used, __ATOMIC_RELAXED);
    for (int h = 0; h < SP_HZ_COUNT; h++) {
        if (!__atomic_load_n(&hazard_count[h], __ATOMIC_RELAXED))
            continue;
        for (int rt = 0; rt < SP_DIAG_RT_MAX; rt++) {
            const char *bare = rt_bare[rt] ? rt_bare[rt][h] : NULL;
            if ((used & 1u << rt) && rt_names[rt] && bare && bare[0])
                sp_log(SP_LOG_ERROR, "summary", "  %s: without safepin (%s): %s",
                       hazard_table[h].name, rt_names[rt], bare);
        }
    }
}

static void finish_body(int exit_status)
{
    sp_supp_flush();
    uint64_t n = __atomic_load_n(&lat_n, __ATOMIC_RELAXED);
    if (n > SP_LAT_MAX)
        n = SP_LAT_MAX;
    static uint64_t copy[SP_LAT_MAX];
    memcpy(copy, lat, n * sizeof(uint64_t));
    double p50, p90, p99, max;
    pct(copy, n, &p50, &p90, &p99, &max);

    /* What the shipped default suppressions silence is not worth a summary
     * of its own; what the user's silence is. */
    int noteworthy = sp_violations() || sp_hazards_prevented() || SP_STAT(deferred_frees) ||
                     SP_STAT(deferred_unmaps) ||
                     SP_STAT(revived) || SP_STAT(waits_for_release) || sp_supp_suppressed_user();
    if (sp_opt.summary && (noteworthy || sp_opt.log_level >= SP_LOG_INFO)) {
        sp_log(SP_LOG_ERROR, "summary",
               "%llu registrations (%llu nested, %llu revived), %llu releases completed, "
               "%llu deferred frees, %llu deferred unmaps, %llu leaks",
               (unsigned long long)SP_STAT(registrations), (unsigned long long)SP_STAT(nested),
               (unsigned long long)SP_STAT(revived), (unsigned long long)SP_STAT(releases_completed),
               (unsigned long long)SP_STAT(deferred_frees),
               (unsigned long long)SP_STAT(deferred_unmaps), (unsigned long long)SP_STAT(leaks));
        if (n)
            sp_log(SP_LOG_ERROR, "summary",
                   "release latency (unregister call to real unregister done): p50 %.1f us, "
                   "p90 %.1f us, p99 %.1f us, max %.1f us over %llu releases",
                   p50, p90, p99, max, (unsigned long long)n);
        char line[512];
        size_t o = 0;
        for (int c = 0; c < SP_CODE_COUNT; c++) {
            if (!SP_STAT(code_count[c]) || c == SP_HAZARD_PREVENTED)
                continue; /* (hazards have their line) */
            int w = snprintf(line + o, sizeof(line) - o, "%s%s=%llu", o ? ", " : "",
                             code_table[c].name, (unsigned long long)SP_STAT(code_count[c]));
            if (w < 0 || (size_t)w >= sizeof(line) - o)
                break;
            o += (size_t)w;
        }
        char supp[64] = "";
        if (sp_supp_suppressed_total())
            snprintf(supp, sizeof(supp), " (%llu suppressed)",
                     (unsigned long long)sp_supp_suppressed_total());
        say_hazards();
        sp_log(SP_LOG_ERROR, "summary", "%llu violations%s%s%s",
               (unsigned long long)sp_violations(), supp, o ? ": " : "", o ? line : "");
        /* As LSan's "Suppressions used": count and line, where it was read. */
        for (int i = 0; i < sp_supp_count(); i++) {
            const sp_supp *e = sp_supp_get(i);
            uint64_t hits = __atomic_load_n(&e->hits, __ATOMIC_RELAXED);
            if (hits)
                sp_log(SP_LOG_ERROR, "summary", "suppression used: %llu x %s:%s (%s:%u)",
                       (unsigned long long)hits,
                       e->code == SP_SUPP_CODE_ANY ? "*" : code_table[e->code].name, e->pattern,
                       e->is_default ? "default suppressions" : sp_supp_source(e->source),
                       e->line);
        }
    }
    if (!report_file[0] && sp_opt.report[0]) /* finishing without sp_diag_init */
        make_absolute(sp_opt.report, report_file, sizeof(report_file));
    if (report_wanted())
        write_report(exit_status, 0, p50, p90, p99, max, n);
}

static void finish_own(void *p) { finish_body(*(int *)p); }

void sp_diag_report_dying(int sig)
{
    if (!report_file[0] && sp_opt.report[0])
        make_absolute(sp_opt.report, report_file, sizeof(report_file));
    if (!report_wanted())
        return;
    uint64_t n = __atomic_load_n(&lat_n, __ATOMIC_RELAXED);
    /* No percentiles (a sort): the count only. */
    write_report(128 + sig, sig, 0, 0, 0, 0, n > SP_LAT_MAX ? SP_LAT_MAX : n);
}

void sp_diag_finish(int exit_status) { sp_call_on_own_stack(finish_own, &exit_status); }

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
    forked_child = 1;
    memset(&sp_stat, 0, sizeof(sp_stat));
    violations_total = 0;
    memset(hazard_count, 0, sizeof(hazard_count));
    kept_n = 0;
    pthread_mutex_init(&kept_lock, NULL);
    sp_history_fork_child();
    sp_supp_fork_child();
    lat_n = 0;
    if (strstr(log_file, "%p")) {
        int fd = log_fd;
        if (fd >= 0 && log_is_ours(fd))
            close(fd);
        log_fd = -1;
    }
    sp_symbolize_fork_child(prepared);
}
