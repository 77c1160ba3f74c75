/*
 * report.c - the JSON report (report option): at the process's end, or
 * from a fatal signal's handler after the post-mortem. Formatted into a
 * static buffer and written with write(2), aside and renamed into place;
 * the kept violations' frames symbolized in one batch.
 */
#include "diag_internal.h"
#include "suppress.h"
#include "symbolize.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char report_file[PATH_MAX]; /* "" : no report */

void sp_report_init(void)
{
    sp_diag_make_absolute(sp_opt.report, report_file, sizeof(report_file));
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

/* The table for sp_kept[0..sp_kept_n) (sp_kept_lock held); t->n = 0 when it cannot be
 * built: each stack is then symbolized on its own. */
static void frame_table_build(frame_table *t)
{
    size_t most = 0, n = 0;
    *t = (frame_table){0};
    for (unsigned i = 0; i < sp_kept_n; i++)
        most += 3 * SP_SYM_MAX;
    frame_key *key = most ? sp_mem_alloc(most * sizeof(*key)) : NULL;
    if (!key)
        return;
    for (unsigned i = 0; i < sp_kept_n; i++) {
        n = add_site_keys(key, n, sp_kept[i]->at);
        n = add_site_keys(key, n, sp_kept[i]->registered);
        n = add_site_keys(key, n, sp_kept[i]->unregistered);
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
    if (!sp_diag_forked_child || strstr(report_file, "%p"))
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
            rprintf(f, "%s\"%s\": %llu", n++ ? ", " : "", sp_code_table[c].name,
                    (unsigned long long)sp_supp_suppressed_code(c));
    rprintf(f, "},\n  \"suppressions_used\": [");
    int n = 0;
    for (int i = 0; i < sp_supp_count(); i++) {
        const sp_supp *e = sp_supp_get(i);
        uint64_t hits = __atomic_load_n(&e->hits, __ATOMIC_RELAXED);
        if (!hits)
            continue;
        rprintf(f, "%s\n    {\"code\": \"%s\", \"pattern\": ", n++ ? "," : "",
                e->code == SP_SUPP_CODE_ANY ? "*" : sp_code_table[e->code].name);
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
    sp_diag_expand_path(report_file, path, sizeof(path));
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
    unsigned used = __atomic_load_n(&sp_diag_rt_used, __ATOMIC_RELAXED);
    for (int i = 0, n = 0; i < SP_DIAG_RT_MAX; i++)
        if ((used & 1u << i) && sp_diag_rt_names[i])
            rprintf(f, "%s\"%s\"", n++ ? ", " : "", sp_diag_rt_names[i]);
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
        rprintf(f, "%s\"%s\": %llu", c ? ", " : "", sp_code_table[c].name,
                (unsigned long long)SP_STAT(code_count[c]));
    rprintf(f, "},\n");
    rprintf(f, "  \"hazards_prevented\": {");
    for (int h = 0, n = 0; h < SP_HZ_COUNT; h++) {
        uint64_t k = __atomic_load_n(&sp_hazard_count[h], __ATOMIC_RELAXED);
        if (k)
            rprintf(f, "%s\"%s\": %llu", n++ ? ", " : "", sp_hazard_table[h].name,
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
    int locked = pthread_mutex_timedlock(&sp_kept_lock, &until) == 0;
    frame_table frames = {0};
    if (locked && sig) {
        /* Every frame of the kept stacks in the post-mortem's one batch. */
        for (unsigned i = 0; i < sp_kept_n; i++) {
            const sp_site *ss[3] = {sp_kept[i]->at, sp_kept[i]->registered,
                                    sp_kept[i]->unregistered};
            for (int k = 0; k < 3; k++)
                for (int j = 0; ss[k] && j < ss[k]->n && j < SP_SYM_MAX; j++)
                    sp_pm_add(ss[k]->pc[j]);
        }
        sp_pm_symbolize(sp_now_ns() + 5000000000ull);
        frames.dying = 1;
    } else if (locked) {
        frame_table_build(&frames);
    }
    for (unsigned i = 0; locked && i < sp_kept_n; i++) {
        kept_violation *k = sp_kept[i];
        rprintf(f, "%s\n    {\"code\": \"%s\", ", i ? "," : "", sp_code_table[k->code].name);
        if (k->rt >= 0 && k->rt < SP_DIAG_RT_MAX && sp_diag_rt_names[k->rt])
            rprintf(f, "\"runtime\": \"%s\", ", sp_diag_rt_names[k->rt]);
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
        pthread_mutex_unlock(&sp_kept_lock);
    rprintf(f, "%s]\n}\n", locked && sp_kept_n ? "\n  " : "");
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

void sp_report_at_exit(int exit_status, double p50, double p90, double p99, double max,
                       uint64_t nlat)
{
    if (!report_file[0] && sp_opt.report[0]) /* finishing without sp_diag_init */
        sp_diag_make_absolute(sp_opt.report, report_file, sizeof(report_file));
    if (report_wanted())
        write_report(exit_status, 0, p50, p90, p99, max, nlat);
}

void sp_diag_report_dying(int sig)
{
    if (!report_file[0] && sp_opt.report[0])
        sp_diag_make_absolute(sp_opt.report, report_file, sizeof(report_file));
    if (!report_wanted())
        return;
    uint64_t n = __atomic_load_n(&sp_diag_lat_n, __ATOMIC_RELAXED);
    /* No percentiles (a sort): the count only. */
    write_report(128 + sig, sig, 0, 0, 0, 0, n > SP_LAT_MAX ? SP_LAT_MAX : n);
}
