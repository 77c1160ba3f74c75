/*
 * diag.c - logging, diagnostics, counters, history, summary and report.
 */
#include "diag.h"
#include "registry.h"
#include "symbolize.h"

#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

sp_stats sp_stat;

static int log_fd = 2;
static uintptr_t self_lo, self_hi; /* safepin's own loaded segments */

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

const char *sp_code_name(sp_code c) { return code_table[c].name; }
int sp_code_is_violation(sp_code c) { return code_table[c].violation; }

uint64_t sp_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

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
    dl_iterate_phdr(find_self, NULL);
    if (sp_opt.log_path[0]) {
        char path[512];
        expand_path(sp_opt.log_path, path, sizeof(path));
        int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd >= 0)
            log_fd = fd;
        else
            sp_log(SP_LOG_WARN, "options", "cannot open log_path '%s': %s", path, strerror(errno));
    }
    void *warm[2];
    backtrace(warm, 2); /* loads the unwinder now, not inside a hook */
    if (sp_opt.symbolize)
        sp_symbolize_init(); /* what spawning addr2line needs, allocated now */
}

static void write_all(const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t w = write(log_fd, buf, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return;
        }
        buf += w;
        len -= (size_t)w;
    }
}

static size_t prefix(char *buf, size_t n, const char *code)
{
    int w = snprintf(buf, n, "==%d==safepin: %s: ", (int)getpid(), code);
    return w < 0 ? 0 : ((size_t)w < n ? (size_t)w : n - 1);
}

static void vlog_line(const char *code, const char *fmt, va_list ap)
{
    char buf[1024];
    size_t o = prefix(buf, sizeof(buf), code);
    int w = vsnprintf(buf + o, sizeof(buf) - o, fmt, ap);
    if (w > 0)
        o += (size_t)w < sizeof(buf) - o ? (size_t)w : sizeof(buf) - o - 1;
    if (o < sizeof(buf) - 1)
        buf[o++] = '\n';
    else
        buf[sizeof(buf) - 2] = '\n', o = sizeof(buf) - 1;
    write_all(buf, o);
}

void sp_log(int level, const char *code, const char *fmt, ...)
{
    if (level > sp_opt.log_level && sp_opt.log[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vlog_line(code, fmt, ap);
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

sp_site *sp_site_capture(void)
{
    if (sp_opt.backtrace <= 0)
        return NULL;
    void *pc[SP_MAX_FRAMES + 8];
    int n = backtrace(pc, (int)sp_opt.backtrace + 8);
    int skip = first_foreign_frame(pc, n);
    int keep = n - skip;
    if (keep > sp_opt.backtrace)
        keep = (int)sp_opt.backtrace;
    sp_site *s = sp_mem_alloc(sizeof(*s) + (size_t)keep * sizeof(void *));
    if (!s)
        return NULL;
    s->t_ns = sp_now_ns();
    s->tid = (pid_t)syscall(SYS_gettid);
    s->n = keep;
    memcpy(s->pc, pc + skip, (size_t)keep * sizeof(void *));
    return s;
}

void sp_site_free(sp_site *s) { sp_mem_free(s); }

/* ---- violations kept for the report ---------------------------------- */

#define SP_MAX_KEPT 256

typedef struct kept_violation {
    sp_code code;
    uint64_t t_ns;
    uintptr_t base;
    size_t size;
    char msg[256];
    sp_site *at, *registered, *unregistered;
} kept_violation;

static kept_violation *kept[SP_MAX_KEPT];
static unsigned kept_n;
static uint64_t violations_total;
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

static sp_site *site_copy(const sp_site *s)
{
    if (!s)
        return NULL;
    size_t sz = sizeof(*s) + (size_t)s->n * sizeof(void *);
    sp_site *c = sp_mem_alloc(sz);
    if (c)
        memcpy(c, s, sz);
    return c;
}

uint64_t sp_violations(void) { return __atomic_load_n(&violations_total, __ATOMIC_RELAXED); }

void sp_diag(sp_code c, const struct sp_range *r, const char *fmt, ...)
{
    uint64_t nth = __atomic_add_fetch(&sp_stat.code_count[c], 1, __ATOMIC_RELAXED);
    if (code_table[c].violation)
        __atomic_add_fetch(&violations_total, 1, __ATOMIC_RELAXED);

    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);

    int print = code_table[c].level <= sp_opt.log_level && nth <= (uint64_t)sp_opt.max_repeats;
    sp_site *here = NULL;
    if (print || code_table[c].violation)
        here = sp_site_capture();

    if (print) {
        sp_log(SP_LOG_ERROR, code_table[c].name, "%s", msg);
        if (here)
            print_pcs("at", here->pc, here->n, here->tid);
        if (r && r->reg_site) {
            const sp_site *s = r->reg_site;
            print_pcs("registered at", s->pc, s->n, s->tid);
        }
        if (r && r->unreg_site) {
            const sp_site *s = r->unreg_site;
            print_pcs("unregistered/freed at", s->pc, s->n, s->tid);
        }
        if (nth == (uint64_t)sp_opt.max_repeats)
            sp_log(SP_LOG_ERROR, code_table[c].name,
                   "further reports of this code are counted, not printed");
    }

    if (code_table[c].violation) {
        pthread_mutex_lock(&kept_lock);
        if (kept_n < SP_MAX_KEPT) {
            kept_violation *k = sp_mem_calloc(1, sizeof(*k));
            if (k) {
                k->code = c;
                k->t_ns = sp_now_ns();
                memcpy(k->msg, msg, sizeof(k->msg));
                k->at = here;
                here = NULL;
                if (r) {
                    k->base = r->base;
                    k->size = r->size;
                    k->registered = site_copy(r->reg_site);
                    k->unregistered = site_copy(r->unreg_site);
                }
                kept[kept_n++] = k;
            }
        }
        pthread_mutex_unlock(&kept_lock);
    }
    sp_site_free(here);
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

/* ---- history --------------------------------------------------------- */

typedef struct hist_event {
    uint64_t t_ns;
    int kind;
    pid_t tid;
    uintptr_t base;
    size_t size;
    int n;
    void *pc[8];
} hist_event;

#define SP_HIST_MAX 4096
static hist_event hist[SP_HIST_MAX];
static uint64_t hist_n;

static const char *hist_kind[] = {"register", "nest", "unregister", "free", "released",
                                  "revive", "refused"};

void sp_history_add(int kind, uintptr_t base, size_t size, const sp_site *site)
{
    if (sp_opt.history <= 0)
        return;
    uint64_t cap = (uint64_t)sp_opt.history < SP_HIST_MAX ? (uint64_t)sp_opt.history : SP_HIST_MAX;
    uint64_t i = __atomic_fetch_add(&hist_n, 1, __ATOMIC_RELAXED) % cap;
    hist_event *e = &hist[i];
    /* Written without a lock: a torn entry only garbles a post-mortem line. */
    __atomic_store_n(&e->t_ns, sp_now_ns(), __ATOMIC_RELAXED);
    __atomic_store_n(&e->kind, kind, __ATOMIC_RELAXED);
    __atomic_store_n(&e->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELAXED);
    __atomic_store_n(&e->base, base, __ATOMIC_RELAXED);
    __atomic_store_n(&e->size, size, __ATOMIC_RELAXED);
    int n = 0;
    if (site) {
        for (int j = 0; j < site->n && n < 8; j++)
            __atomic_store_n(&e->pc[n++], site->pc[j], __ATOMIC_RELAXED);
    }
    __atomic_store_n(&e->n, n, __ATOMIC_RELAXED);
}

void sp_history_dump(uintptr_t addr)
{
    uint64_t total = __atomic_load_n(&hist_n, __ATOMIC_RELAXED);
    if (sp_opt.history <= 0 || total == 0)
        return;
    uint64_t cap = (uint64_t)sp_opt.history < SP_HIST_MAX ? (uint64_t)sp_opt.history : SP_HIST_MAX;
    uint64_t start = total > cap ? total - cap : 0;
    uint64_t t0 = sp_now_ns();
    for (uint64_t k = start; k < total; k++) {
        hist_event *e = &hist[k % cap];
        uintptr_t b = __atomic_load_n(&e->base, __ATOMIC_RELAXED);
        size_t sz = __atomic_load_n(&e->size, __ATOMIC_RELAXED);
        if (addr && !(addr >= b && addr < b + (sz ? sz : 1)))
            continue;
        int kind = __atomic_load_n(&e->kind, __ATOMIC_RELAXED);
        if (kind < 0 || kind > SP_EV_REFUSED)
            continue;
        char buf[256];
        int w = snprintf(buf, sizeof(buf), "  [%.3f ms ago] %-10s 0x%lx size %zu (thread %d)\n",
                         (double)(t0 - e->t_ns) / 1e6, hist_kind[kind], (unsigned long)b, sz,
                         (int)e->tid);
        if (w > 0)
            write_all(buf, (size_t)w < sizeof(buf) ? (size_t)w : sizeof(buf) - 1);
        int n = __atomic_load_n(&e->n, __ATOMIC_RELAXED);
        if (n > 8)
            n = 8;
        void *pcs[8];
        sp_frame_info fi[8];
        for (int j = 0; j < n; j++)
            pcs[j] = e->pc[j];
        if (n > 0)
            sp_symbolize_dying(pcs, n, fi);
        for (int j = 0; j < n; j++) {
            w = sp_format_frame(buf, sizeof(buf), j, pcs[j], &fi[j]);
            if (w > 0)
                write_all(buf, (size_t)w < sizeof(buf) ? (size_t)w : sizeof(buf) - 1);
        }
    }
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

static void json_str(FILE *f, const char *s);

static void json_site(FILE *f, const char *key, const sp_site *s)
{
    fprintf(f, "\"%s\": ", key);
    if (!s) {
        fprintf(f, "null");
        return;
    }
    int n = s->n < SP_SYM_MAX ? s->n : SP_SYM_MAX;
    sp_frame_info fi[n > 0 ? n : 1];
    if (n > 0)
        sp_symbolize(s->pc, n, fi);
    fprintf(f, "{\"thread\": %d, \"frames\": [", (int)s->tid);
    for (int i = 0; i < n; i++) {
        fprintf(f, "%s{\"pc\": \"%p\", \"function\": ", i ? ", " : "", s->pc[i]);
        json_str(f, fi[i].func);
        fprintf(f, ", \"offset\": %lu, \"file\": ", (unsigned long)fi[i].func_offset);
        json_str(f, fi[i].file);
        fprintf(f, ", \"module\": ");
        json_str(f, fi[i].module);
        fprintf(f, ", \"module_offset\": %lu}", (unsigned long)fi[i].module_offset);
    }
    fprintf(f, "]}");
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", *s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

static void write_report(int exit_status, double p50, double p90, double p99, double max,
                         uint64_t nlat)
{
    char path[512];
    expand_path(sp_opt.report, path, sizeof(path));
    FILE *f = fopen(path, "w");
    if (!f) {
        sp_log(SP_LOG_WARN, "report", "cannot write report '%s': %s", path, strerror(errno));
        return;
    }
    fprintf(f, "{\n  \"tool\": \"safepin\",\n  \"version\": \"%s\",\n  \"schema\": 1,\n  \"pid\": %d,\n",
            SAFEPIN_VERSION, (int)getpid());
    fprintf(f, "  \"exit_status\": %d,\n  \"violations_total\": %llu,\n", exit_status,
            (unsigned long long)sp_violations());
    fprintf(f, "  \"counters\": {\n");
#define C(x) fprintf(f, "    \"%s\": %llu,\n", #x, (unsigned long long)sp_stat.x)
    C(registrations); C(nested); C(revived); C(overlapping_refused);
    C(releases_submitted); C(releases_completed); C(releases_cancelled);
    C(deferred_frees); C(deferred_unmaps); C(deferred_madvise); C(deferred_hipfree);
    C(waits_for_release); C(capture_deferrals); C(marker_batches); C(runtime_errors);
#undef C
    fprintf(f, "    \"leaks\": %llu\n  },\n", (unsigned long long)sp_stat.leaks);
    fprintf(f, "  \"codes\": {");
    for (int c = 0; c < SP_CODE_COUNT; c++)
        fprintf(f, "%s\"%s\": %llu", c ? ", " : "", code_table[c].name,
                (unsigned long long)sp_stat.code_count[c]);
    fprintf(f, "},\n");
    fprintf(f, "  \"release_latency_us\": {\"count\": %llu, \"p50\": %.1f, \"p90\": %.1f, "
               "\"p99\": %.1f, \"max\": %.1f},\n",
            (unsigned long long)nlat, p50, p90, p99, max);
    fprintf(f, "  \"violations\": [");
    pthread_mutex_lock(&kept_lock);
    for (unsigned i = 0; i < kept_n; i++) {
        kept_violation *k = kept[i];
        fprintf(f, "%s\n    {\"code\": \"%s\", \"message\": ", i ? "," : "",
                code_table[k->code].name);
        json_str(f, k->msg);
        fprintf(f, ", \"base\": \"0x%lx\", \"size\": %zu, ", (unsigned long)k->base, k->size);
        json_site(f, "at", k->at);
        fprintf(f, ", ");
        json_site(f, "registered", k->registered);
        fprintf(f, ", ");
        json_site(f, "unregistered", k->unregistered);
        fprintf(f, "}");
    }
    pthread_mutex_unlock(&kept_lock);
    fprintf(f, "%s]\n}\n", kept_n ? "\n  " : "");
    fclose(f);
}

void sp_diag_finish(int exit_status)
{
    uint64_t n = __atomic_load_n(&lat_n, __ATOMIC_RELAXED);
    if (n > SP_LAT_MAX)
        n = SP_LAT_MAX;
    static uint64_t copy[SP_LAT_MAX];
    memcpy(copy, lat, n * sizeof(uint64_t));
    double p50, p90, p99, max;
    pct(copy, n, &p50, &p90, &p99, &max);

    int noteworthy = sp_violations() || sp_stat.deferred_frees || sp_stat.deferred_unmaps ||
                     sp_stat.revived || sp_stat.waits_for_release;
    if (sp_opt.summary && (noteworthy || sp_opt.log_level >= SP_LOG_INFO)) {
        sp_log(SP_LOG_ERROR, "summary",
               "%llu registrations (%llu nested, %llu revived), %llu releases completed, "
               "%llu deferred frees, %llu deferred unmaps, %llu leaks",
               (unsigned long long)sp_stat.registrations, (unsigned long long)sp_stat.nested,
               (unsigned long long)sp_stat.revived, (unsigned long long)sp_stat.releases_completed,
               (unsigned long long)sp_stat.deferred_frees,
               (unsigned long long)sp_stat.deferred_unmaps, (unsigned long long)sp_stat.leaks);
        if (n)
            sp_log(SP_LOG_ERROR, "summary",
                   "release latency (unregister call to real unregister done): p50 %.1f us, "
                   "p90 %.1f us, p99 %.1f us, max %.1f us over %llu releases",
                   p50, p90, p99, max, (unsigned long long)n);
        char line[512];
        size_t o = 0;
        for (int c = 0; c < SP_CODE_COUNT; c++) {
            if (!sp_stat.code_count[c])
                continue;
            int w = snprintf(line + o, sizeof(line) - o, "%s%s=%llu", o ? ", " : "",
                             code_table[c].name, (unsigned long long)sp_stat.code_count[c]);
            if (w < 0 || (size_t)w >= sizeof(line) - o)
                break;
            o += (size_t)w;
        }
        sp_log(SP_LOG_ERROR, "summary", "%llu violations%s%s",
               (unsigned long long)sp_violations(), o ? ": " : "", o ? line : "");
    }
    if (sp_opt.report[0])
        write_report(exit_status, p50, p90, p99, max, n);
}
