/*
 * log.c - the log: its file (log_path, opened when the first line is
 * written, checked before every write) or stderr, and its lines: each
 * formatted into a fixed buffer on safepin's own stack, prefixed and
 * written with write(2); a runtime-error line is counted as that code.
 * The stacks of a diagnostic, frame by frame.
 */
#include "diag_internal.h"
#include "ownstack.h"
#include "suppress.h"
#include "symbolize.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The log. Without log_path it is stderr (fd 2). With it, a file safepin
 * opens itself when the first line is written (a process that says nothing
 * creates no file), close-on-exec, O_APPEND, on a high descriptor number.
 * Before every write the descriptor is checked to still be that file
 * (device, inode, flags): a program that closed it and got the number back
 * for a file of its own is never written to (G10); the log is opened again.
 * Paths are made absolute at start, so a later chdir changes nothing; %p is
 * expanded when the file is opened (a forked child opens its own). */
static char log_file[PATH_MAX];    /* "" : stderr */
static int log_fd = -1;            /* the open log file, -1: none yet (atomic) */
static dev_t log_dev;              /* its identity (atomic; racing openers agree) */
static ino_t log_ino;
static int log_failed;             /* log_path cannot be opened: stderr (atomic) */

/* Expand %p to the pid. */
void sp_diag_expand_path(const char *in, char *out, size_t n)
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
void sp_diag_make_absolute(const char *in, char *out, size_t n)
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
    sp_diag_expand_path(log_file, path, sizeof(path));
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

void sp_log_init(void) { sp_diag_make_absolute(sp_opt.log_path, log_file, sizeof(log_file)); }

static size_t prefix(char *buf, size_t n, const char *code)
{
    int w = snprintf(buf, n, "==%d==safepin: %s: ", (int)getpid(), code);
    return w < 0 ? 0 : ((size_t)w < n ? (size_t)w : n - 1);
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
            sp_tls_diags++;
            sp_supp_hit(s, SP_RUNTIME_ERROR);
            pthread_setcancelstate(cancel, NULL);
            return;
        }
    }
    if (print)
        write_all(buf, o);
    if (counted) {
        buf[o - 1] = '\0';
        sp_diag_count_code(SP_RUNTIME_ERROR, 1);
        sp_diag_keep_violation(SP_RUNTIME_ERROR, buf + at, here, NULL);
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
    int counted = strcmp(code, sp_code_table[SP_RUNTIME_ERROR].name) == 0;
    int print = level <= sp_opt.log_level || !sp_opt.log[0];
    if (!print && !counted)
        return;
    log_call l = {print, counted, code, counted ? sp_diag_capture(SP_RUNTIME_ERROR) : NULL, fmt,
                  NULL};
    va_list ap;
    va_start(ap, fmt);
    l.ap = &ap;
    sp_call_on_own_stack(vlog_own, &l);
    va_end(ap);
}

/* A line of a diagnostic sp_diag has counted already. */
void sp_log_counted(const char *code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(1, 0, code, NULL, fmt, ap);
    va_end(ap);
}

void sp_log_print_pcs(const char *what, void *const *pc, int n, pid_t tid)
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

/* With %p in log_path, a forked child's log is its own file, opened when
 * it first says something. */
void sp_log_fork_child(void)
{
    if (strstr(log_file, "%p")) {
        int fd = log_fd;
        if (fd >= 0 && log_is_ours(fd))
            close(fd);
        log_fd = -1;
    }
}
