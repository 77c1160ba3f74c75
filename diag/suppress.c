/*
 * suppress.c - suppressions (see suppress.h): parsed once, matched against
 * a diagnostic's stacks, counted by suppression.
 *
 * The shipped defaults are diag/default.supp, compiled in (the build turns
 * it into default_supp.inc): the library carries them wherever it is
 * copied (package, wheel), and default_suppressions=0 turns them off.
 */
#include "suppress.h"
#include "diag.h"
#include "options.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The most of a suppressions file read. */
#define SUPP_FILE_MAX ((size_t)16 << 20)

static const char default_text[] = ""
#include "default_supp.inc"
    ;

static const char *const code_names[SP_CODE_COUNT] = {
#define SP_CODE(id, name, level, violation, desc) name,
#include "codes.inc"
#undef SP_CODE
};

#define SP_SUPP_SOURCES 16

/* Written by sp_supp_init (before any diagnostic can match) and tests;
 * read-only afterwards, but for the counters. */
static sp_supp supp[SP_SUPP_MAX];
static int supp_n;
static char sources[SP_SUPP_SOURCES][PATH_MAX];
static int sources_n;
static uint64_t want_mask;                /* bit c: some suppression for code c */
static uint64_t func_mask;                /* bit c: some function pattern for code c */
static uint64_t suppressed_total;         /* atomic */
static uint64_t suppressed_user;          /* atomic */
static uint64_t suppressed_code[SP_CODE_COUNT]; /* atomic */
static int full_said;

/* Problems found while reading, said at the process's first diagnostic or
 * at its end (sp_supp_flush): a helper that inherited LD_PRELOAD and never
 * uses a runtime (sh, timeout) says nothing, so each is said once a run. */
static char pending[8192]; /* lines, '\n' after each */
static size_t pending_len;
static int pending_said;   /* atomic */

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
    if (pending_len >= sizeof(pending) - 1)
        return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(pending + pending_len, sizeof(pending) - pending_len - 1, fmt, ap);
    va_end(ap);
    if (w < 0)
        return;
    pending_len += (size_t)w < sizeof(pending) - pending_len - 1 ? (size_t)w
                                                                 : sizeof(pending) - pending_len - 2;
    pending[pending_len++] = '\n';
    pending[pending_len] = '\0';
}

void sp_supp_flush(void)
{
    if (__atomic_load_n(&pending_said, __ATOMIC_ACQUIRE) ||
        __atomic_exchange_n(&pending_said, 1, __ATOMIC_ACQ_REL))
        return;
    for (const char *p = pending; p < pending + pending_len;) {
        const char *nl = memchr(p, '\n', (size_t)(pending + pending_len - p));
        int len = nl ? (int)(nl - p) : (int)(pending + pending_len - p);
        sp_log(SP_LOG_WARN, "suppressions", "%.*s", len, p);
        p += len + 1;
    }
}

_Static_assert(SP_CODE_COUNT <= 64, "want_mask holds one bit per code");

void sp_supp_reset(void)
{
    supp_n = 0;
    sources_n = 0;
    full_said = 0;
    __atomic_store_n(&want_mask, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&func_mask, 0, __ATOMIC_RELEASE);
    sp_supp_fork_child();
    pending_len = 0;
    pending[0] = '\0';
    __atomic_store_n(&pending_said, 0, __ATOMIC_RELEASE);
}

void sp_supp_fork_child(void)
{
    /* What the parent has to say about its files is the parent's. */
    __atomic_store_n(&pending_said, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < supp_n; i++)
        supp[i].hits = 0;
    suppressed_total = 0;
    suppressed_user = 0;
    memset(suppressed_code, 0, sizeof(suppressed_code));
}

int sp_supp_wanted(int c)
{
    return c >= 0 && c < SP_CODE_COUNT && ((__atomic_load_n(&want_mask, __ATOMIC_ACQUIRE) >> c) & 1);
}

static int is_space(char ch) { return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n'; }

static void trim(const char **s, size_t *len)
{
    while (*len && is_space(**s)) {
        (*s)++;
        (*len)--;
    }
    while (*len && is_space((*s)[*len - 1]))
        (*len)--;
}

static int add_source(const char *name)
{
    if (sources_n >= SP_SUPP_SOURCES)
        return -1;
    size_t l = strlen(name);
    if (l >= PATH_MAX)
        l = PATH_MAX - 1;
    memcpy(sources[sources_n], name, l);
    sources[sources_n][l] = '\0';
    return sources_n++;
}

const char *sp_supp_source(int source)
{
    return source >= 0 && source < sources_n ? sources[source] : "";
}

static const char *source_label(const char *source)
{
    return source[0] ? source : "<default suppressions>";
}

/* One line; returns 1 if it is malformed (reported). */
static int parse_line(const char *line, size_t len, int source, const char *name, unsigned lineno,
                      int is_default)
{
    const char *s = line;
    trim(&s, &len);
    if (len == 0 || s[0] == '#')
        return 0;
    const char *why = NULL;
    const char *colon = memchr(s, ':', len);
    const char *code = s, *pat = NULL;
    size_t clen = 0, plen = 0;
    int c = SP_SUPP_CODE_ANY;
    if (!colon) {
        why = "no ':' (want CODE:PATTERN)";
    } else {
        clen = (size_t)(colon - s);
        pat = colon + 1;
        plen = len - clen - 1;
        trim(&code, &clen);
        trim(&pat, &plen);
        if (!(clen == 1 && code[0] == '*')) {
            c = -2;
            for (int i = 0; i < SP_CODE_COUNT; i++)
                if (strlen(code_names[i]) == clen && strncmp(code_names[i], code, clen) == 0)
                    c = i;
        }
        if (clen == 0)
            why = "no code before ':' (want a diagnostic code or '*')";
        else if (c == -2)
            why = "unknown diagnostic code";
        else if (plen == 0)
            why = "no pattern after ':'";
        else if (plen >= SP_SUPP_PATTERN_MAX)
            why = "pattern too long (at most 255 characters)";
    }
    if (why) {
        note("%s:%u: %s; line ignored: '%.*s'", source_label(name), lineno, why,
             (int)(len > 200 ? 200 : len), s);
        return 1;
    }
    if (supp_n >= SP_SUPP_MAX) {
        if (!full_said)
            note("%s:%u: more than %d suppressions: this line and those after it are ignored",
                 source_label(name), lineno, SP_SUPP_MAX);
        full_said = 1;
        return 1;
    }
    sp_supp *e = &supp[supp_n];
    e->code = c;
    memcpy(e->pattern, pat, plen);
    e->pattern[plen] = '\0';
    e->source = source;
    e->line = lineno;
    e->is_default = is_default;
    e->hits = 0;
    e->is_module = sp_supp_is_module_pattern(e->pattern);
    supp_n++;
    uint64_t bits = c == SP_SUPP_CODE_ANY ? ~(uint64_t)0 : (uint64_t)1 << c;
    if (!e->is_module)
        __atomic_or_fetch(&func_mask, bits, __ATOMIC_RELEASE);
    __atomic_or_fetch(&want_mask, bits, __ATOMIC_RELEASE);
    return 0;
}

int sp_supp_add_text(const char *text, size_t len, const char *source, int is_default)
{
    int src = add_source(source);
    int bad = 0;
    unsigned lineno = 0;
    size_t at = 0;
    while (at < len) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t l = nl ? (size_t)(nl - (text + at)) : len - at;
        bad += parse_line(text + at, l, src, source, ++lineno, is_default);
        at += l + 1;
    }
    return bad;
}

/* Lines longer than this are reported as malformed (cut). */
#define LINE_MAX_READ 1024

static int load_file(const char *path)
{
    char abs[PATH_MAX];
    abs[0] = '\0';
    if (path[0] != '/' && getcwd(abs, sizeof(abs))) {
        size_t l = strlen(abs);
        if (l + 1 < sizeof(abs) && (l == 0 || abs[l - 1] != '/'))
            abs[l++] = '/', abs[l] = '\0';
    }
    size_t l = strlen(abs);
    size_t pl = strlen(path);
    if (l + pl >= sizeof(abs))
        pl = sizeof(abs) - l - 1;
    memcpy(abs + l, path, pl);
    abs[l + pl] = '\0';

    /* Non-blocking and regular files only: every process that loads the
     * library reads the file at start, and a FIFO, a device or a terminal
     * could keep it waiting (or reading) forever. */
    int fd = open(abs, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        note("cannot read suppressions file '%s': %s", abs, strerror(errno));
        return 1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        note("suppressions file '%s' is not a regular file: ignored", abs);
        close(fd);
        return 1;
    }
    int src = add_source(abs);
    if (src < 0) {
        note("'%s' ignored: at most %d suppressions files", abs, SP_SUPP_SOURCES - 1);
        close(fd);
        return 1;
    }
    /* Line by line through a fixed buffer; a line longer than the buffer
     * keeps its start (and is reported: no pattern is that long). */
    char buf[4096], line[LINE_MAX_READ];
    size_t ll = 0;
    int bad = 0, err = 0;
    unsigned lineno = 0;
    size_t total = 0;
    for (;;) {
        if (total >= SUPP_FILE_MAX) {
            /* A file that never ends (/proc files say size 0). */
            note("suppressions file '%s': more than %u MiB; the rest ignored", abs,
                 (unsigned)(SUPP_FILE_MAX >> 20));
            bad++;
            break;
        }
        ssize_t r = read(fd, buf, sizeof(buf));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            err = errno;
        if (r <= 0)
            break;
        total += (size_t)r;
        for (ssize_t i = 0; i < r; i++) {
            if (buf[i] == '\n') {
                bad += parse_line(line, ll, src, abs, ++lineno, 0);
                ll = 0;
            } else if (ll < sizeof(line)) {
                line[ll++] = buf[i];
            }
        }
    }
    if (ll)
        bad += parse_line(line, ll, src, abs, ++lineno, 0);
    close(fd);
    if (err) {
        note("error reading suppressions file '%s': %s", abs, strerror(err));
        bad++;
    }
    return bad;
}

int sp_supp_init(void)
{
    sp_supp_reset();
    int bad = 0;
    if (sp_opt.default_suppressions)
        bad += sp_supp_add_text(default_text, sizeof(default_text) - 1, "", 1);
    const char *p = sp_opt.suppressions;
    while (p && *p) {
        const char *nl = strchr(p, '\n');
        size_t l = nl ? (size_t)(nl - p) : strlen(p);
        char path[PATH_MAX];
        if (l >= sizeof(path))
            l = sizeof(path) - 1;
        memcpy(path, p, l);
        path[l] = '\0';
        if (l)
            bad += load_file(path);
        p = nl ? nl + 1 : NULL;
    }
    if (supp_n && sp_opt.log_level >= SP_LOG_DEBUG)
        sp_log(SP_LOG_DEBUG, "suppressions", "%d suppressions loaded (%s)", supp_n,
               sp_opt.default_suppressions ? "defaults included" : "without the defaults");
    return bad;
}

int sp_supp_glob(const char *pat, const char *s)
{
    const char *star = NULL, *resume = NULL;
    while (*s) {
        if (*pat == '*') {
            star = pat++;
            resume = s;
        } else if (*pat == '?' || *pat == *s) {
            pat++;
            s++;
        } else if (star) {
            pat = star + 1;
            s = ++resume;
        } else {
            return 0;
        }
    }
    while (*pat == '*')
        pat++;
    return *pat == '\0';
}

int sp_supp_match_frames(int c, const sp_frame_info *fi, int n)
{
    for (int i = 0; i < supp_n; i++) {
        const sp_supp *e = &supp[i];
        if (e->code != SP_SUPP_CODE_ANY && e->code != c)
            continue;
        for (int k = 0; k < n; k++)
            if ((!e->is_module && fi[k].func[0] && sp_supp_glob(e->pattern, fi[k].func)) ||
                (fi[k].module[0] && sp_supp_glob(e->pattern, fi[k].module)))
                return i;
    }
    return -1;
}

int sp_supp_is_module_pattern(const char *pattern) { return strstr(pattern, ".so") != NULL; }

int sp_supp_any(void) { return __atomic_load_n(&want_mask, __ATOMIC_ACQUIRE) != 0; }

/* The frames of st that matching looks at: those it holds for suppressions
 * (held), at least those it shows (n). */
static int frames_of(const sp_site *st)
{
    int n = !st ? 0 : st->held > st->n ? st->held : st->n;
    return n < SP_SYM_MAX ? n : SP_SYM_MAX;
}

static int for_code(const sp_supp *e, int c) { return e->code == SP_SUPP_CODE_ANY || e->code == c; }

/* The first function pattern for code c that names the function of f, or -1. */
static int match_function(int c, const sp_frame_info *f)
{
    if (!f->func[0])
        return -1;
    for (int i = 0; i < supp_n; i++)
        if (!supp[i].is_module && for_code(&supp[i], c) && sp_supp_glob(supp[i].pattern, f->func))
            return i;
    return -1;
}

/*
 * Two passes, cheapest first. 1: every pattern against the module of every
 * frame of every stack, as dladdr names it: no symbolizer. 2: only if no
 * module matched and some function pattern names code c, stack by stack
 * (in the order given), the frames of one module at a time (in the order
 * they come) are symbolized (through the symbolizer's cache: each pc once)
 * and their functions matched; the first match ends it, so the modules past
 * it are never symbolized.
 */
int sp_supp_match(int c, const sp_site *const *stacks, int nstacks)
{
    if (!sp_supp_wanted(c) || nstacks <= 0)
        return -1;
    int total = 0;
    for (int s = 0; s < nstacks; s++)
        total += frames_of(stacks[s]);
    if (total == 0)
        return -1;
    const char *mod[total];  /* base name of the frame's module, or NULL */
    const void *fbase[total]; /* its load base */
    for (int s = 0, at = 0; s < nstacks; s++) {
        for (int k = 0; k < frames_of(stacks[s]); k++, at++) {
            Dl_info info;
            mod[at] = NULL;
            fbase[at] = NULL;
            if (dladdr(stacks[s]->pc[k], &info) && info.dli_fname) {
                const char *slash = strrchr(info.dli_fname, '/');
                mod[at] = slash ? slash + 1 : info.dli_fname;
                fbase[at] = info.dli_fbase;
            }
        }
    }
    for (int i = 0; i < supp_n; i++) {
        if (!for_code(&supp[i], c))
            continue;
        for (int k = 0; k < total; k++)
            if (mod[k] && mod[k][0] && sp_supp_glob(supp[i].pattern, mod[k]))
                return i;
    }
    if (!((__atomic_load_n(&func_mask, __ATOMIC_ACQUIRE) >> c) & 1))
        return -1;
    for (int s = 0, at = 0; s < nstacks; s++) {
        int n = frames_of(stacks[s]);
        if (n == 0)
            continue;
        sp_frame_info fi[n];
        unsigned char done[n], want[n];
        for (int k = 0; k < n; k++)
            done[k] = mod[at + k] == NULL; /* nothing to symbolize there */
        for (int k = 0; k < n; k++) {
            if (done[k])
                continue;
            for (int j = 0; j < n; j++) {
                want[j] = !done[j] && fbase[at + j] == fbase[at + k];
                done[j] |= want[j];
            }
            sp_symbolize_some(stacks[s]->pc, n, want, fi);
            for (int j = 0; j < n; j++) {
                int i = want[j] ? match_function(c, &fi[j]) : -1;
                if (i >= 0)
                    return i;
            }
        }
        at += n;
    }
    return -1;
}

void sp_supp_hit(int i, int c)
{
    if (i < 0 || i >= supp_n)
        return;
    __atomic_add_fetch(&supp[i].hits, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&suppressed_total, 1, __ATOMIC_RELAXED);
    if (!supp[i].is_default)
        __atomic_add_fetch(&suppressed_user, 1, __ATOMIC_RELAXED);
    if (c >= 0 && c < SP_CODE_COUNT)
        __atomic_add_fetch(&suppressed_code[c], 1, __ATOMIC_RELAXED);
}

int sp_supp_count(void) { return supp_n; }
const sp_supp *sp_supp_get(int i) { return i >= 0 && i < supp_n ? &supp[i] : NULL; }
uint64_t sp_supp_suppressed_total(void) { return __atomic_load_n(&suppressed_total, __ATOMIC_RELAXED); }
uint64_t sp_supp_suppressed_user(void) { return __atomic_load_n(&suppressed_user, __ATOMIC_RELAXED); }
uint64_t sp_supp_suppressed_code(int c)
{
    return c >= 0 && c < SP_CODE_COUNT ? __atomic_load_n(&suppressed_code[c], __ATOMIC_RELAXED) : 0;
}

/* Modules a generated suppression never names: the GPU runtimes safepin
 * stands in front of, the C and C++ runtimes, sanitizer runtimes. */
static const char *const runtime_modules[] = {
    "libsafepin", "libcuda.so", "libcudart", "libamdhip64", "libhsa-runtime", "libhsakmt",
    "libc.so", "libc-", "ld-linux", "libpthread", "libdl.so", "libdl-", "librt.so", "libm.so",
    "libstdc++", "libgcc_s", "libasan", "libtsan", "libubsan", "liblsan", NULL,
};

static int is_runtime_module(const char *m)
{
    for (int i = 0; runtime_modules[i]; i++)
        if (strncmp(m, runtime_modules[i], strlen(runtime_modules[i])) == 0)
            return 1;
    return 0;
}

int sp_supp_generate(int c, const sp_site *const *stacks, int nstacks, uintptr_t self_lo,
                     uintptr_t self_hi, char *buf, size_t n)
{
    if (c < 0 || c >= SP_CODE_COUNT)
        return -1;
    for (int s = 0; s < nstacks; s++) {
        const sp_site *st = stacks[s];
        for (int i = 0; i < frames_of(st); i++) {
            if ((uintptr_t)st->pc[i] >= self_lo && (uintptr_t)st->pc[i] < self_hi)
                continue;
            sp_frame_info fi;
            sp_symbolize_plain(st->pc[i], &fi);
            if (!fi.module[0] || is_runtime_module(fi.module))
                continue;
            int w = snprintf(buf, n, "%s:%s", code_names[c], fi.module);
            return w > 0 && (size_t)w < n ? 0 : -1;
        }
    }
    return -1;
}
