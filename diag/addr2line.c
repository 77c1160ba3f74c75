/*
 * addr2line.c - addr2line for the symbolizer (symbolize.c): found on PATH,
 * started invisibly to the program, asked for one module's frames and
 * read within a deadline.
 *
 * No helper process is visible to the program (G10): addr2line is a
 * grandchild. A middle process, cloned with no exit signal (CLONE_VM |
 * CLONE_VFORK | CLONE_FILES: it costs no copy of the address space), starts
 * addr2line and exits at once; safepin reaps the middle with
 * waitpid(pid, __WCLONE), which the program's wait()/waitpid(-1)/waitid()
 * never see (exec would give a direct child SIGCHLD back, so addr2line
 * cannot be one). addr2line, orphaned, belongs to init: no SIGCHLD comes
 * for it and wait() never returns it. (A program that is itself a child
 * subreaper, or init of its pid namespace, would adopt it: there, stacks
 * keep dladdr's names.) Both run on
 * static stacks with every signal blocked, and only raw system calls: they
 * touch no lock, allocator or sanitizer state of the parent, and addr2line
 * gets default signal handlers. Printing a diagnostic thus allocates
 * nothing (it may run inside free(), or in a fatal signal handler).
 *
 * Bounded in time: the parent reads the two lines per address it asked for
 * and stops there (a copy of the pipe held elsewhere cannot stall it), with
 * a deadline; a run that misses it is killed through its pidfd, and
 * addr2line is not used again in this process.
 *
 * Locks: spawn_lock guards spawn_space (the ordinary path's argv, envp and
 * child stack), pipe_lock guards pipe_fds and is held only around creating
 * and closing a pipe (never across a wait, so fork's prepare handler takes
 * it). Never two at once, nor with symbolize.c's cache_lock. A forked child
 * closes the pipes it inherited and starts with fresh locks. The dying path
 * takes none: it has its own static space, one caller at a time.
 */
#include "symbolize_internal.h"
#include "diag.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_ENV 512

/* ---- starting addr2line invisibly -------------------------------------- */

char sp_a2l_path[512];              /* absolute; "" none (set once, by init) */
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
int sp_a2l_broken;                  /* a run missed its deadline (atomic) */
static unsigned long a2l_runs;      /* runs started (atomic; for tests) */

typedef struct spawn_space {
    char stack[16384] __attribute__((aligned(64))); /* addr2line's, until it execs */
    char mid_stack[4096] __attribute__((aligned(64))); /* the middle process's */
    long grand_pid;      /* addr2line's pid, or <= 0 */
    int pidfd;           /* its pidfd, or -1 */
    char args[RUN_MAX_ADDRS][24];
    char *argv[RUN_MAX_ADDRS + 8];
    char *envp[MAX_ENV];
    long out_fd;         /* the pipe's write end: addr2line's stdout */
    unsigned long mask;  /* the caller's signal mask (kernel form) */
} spawn_space;

static spawn_space ordinary_space; /* spawn_lock */
static spawn_space dying_space;    /* the one dying caller */
static pthread_mutex_t spawn_lock = PTHREAD_MUTEX_INITIALIZER;

#if defined(__x86_64__)
#define CAN_SPAWN 1

__attribute__((always_inline)) static inline long raw_sys(long n, long a, long b, long c, long d)
{
    long ret;
    register long r10 __asm__("r10") = d;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10)
                     : "rcx", "r11", "memory");
    return ret;
}

/* clone(flags) onto stack_top, the child calling fn(arg) and exiting with
 * its value; returns the child's pid, or -errno. ptid receives a pidfd with
 * CLONE_PIDFD. glibc's clone() is not used: sanitizer runtimes intercept it
 * as a fork. */
__attribute__((visibility("hidden"))) long sp_raw_clone(unsigned long flags, void *stack_top,
                                                        int (*fn)(void *), void *arg, int *ptid);
__asm__(".text\n"
        ".globl sp_raw_clone\n"
        ".hidden sp_raw_clone\n"
        ".type sp_raw_clone, @function\n"
        "sp_raw_clone:\n"
        "    movq %rdx, %r9\n"     /* fn */
        "    movq %r8, %rdx\n"     /* ptid */
        "    movq %rcx, %r8\n"     /* arg (in the tls slot, unused without CLONE_SETTLS) */
        "    xorl %r10d, %r10d\n"
        "    movl $56, %eax\n"     /* SYS_clone(flags, stack, ptid, 0, -) */
        "    syscall\n"
        "    testq %rax, %rax\n"
        "    jnz 1f\n"
        "    xorl %ebp, %ebp\n"    /* child, on the new stack */
        "    movq %r8, %rdi\n"
        "    callq *%r9\n"
        "    movl %eax, %edi\n"
        "    movl $60, %eax\n"     /* SYS_exit */
        "    syscall\n"
        "    hlt\n"
        "1:  ret\n"
        ".size sp_raw_clone, .-sp_raw_clone\n");

struct k_sigaction {
    void (*handler)(int);
    unsigned long flags;
    void (*restorer)(void);
    unsigned long mask;
};

/* The child, sharing the parent's memory until it execs: raw system calls
 * only. Signals arrive blocked. */
__attribute__((no_sanitize("address", "thread", "undefined"), noinline)) static int
a2l_child(void *arg)
{
    spawn_space *s = arg;
    for (long sig = 1; sig <= 64; sig++) {
        struct k_sigaction old, dfl;
        if (sig == SIGKILL || sig == SIGSTOP)
            continue;
        if (raw_sys(SYS_rt_sigaction, sig, 0, (long)&old, 8) != 0 || old.handler == SIG_DFL ||
            old.handler == SIG_IGN)
            continue;
        dfl.handler = SIG_DFL;
        dfl.flags = 0;
        dfl.restorer = 0;
        dfl.mask = 0;
        raw_sys(SYS_rt_sigaction, sig, (long)&dfl, 0, 8);
    }
    if (s->out_fd == 1)
        raw_sys(SYS_fcntl, 1, F_SETFD, 0, 0);
    else
        raw_sys(SYS_dup2, s->out_fd, 1, 0, 0);
    long nul = raw_sys(SYS_open, (long)"/dev/null", O_RDWR, 0, 0);
    if (nul >= 0) {
        raw_sys(SYS_dup2, nul, 0, 0, 0);
        raw_sys(SYS_dup2, nul, 2, 0, 0);
    }
    raw_sys(436 /* close_range */, 3, ~0u, 0, 0);
    raw_sys(SYS_rt_sigprocmask, SIG_SETMASK, (long)&s->mask, 0, 8);
    raw_sys(SYS_execve, (long)sp_a2l_path, (long)s->argv, (long)s->envp, 0);
    return 127;
}

/* The middle process: starts addr2line (its child, on s->stack) and exits,
 * leaving it to init. Shares the parent's memory and descriptors. */
__attribute__((no_sanitize("address", "thread", "undefined"), noinline)) static int
a2l_middle(void *arg)
{
    spawn_space *s = arg;
    int pidfd = -1;
    long flags = CLONE_VM | CLONE_VFORK | SIGCHLD;
    long pid = sp_raw_clone(flags | CLONE_PIDFD, s->stack + sizeof(s->stack), a2l_child, s, &pidfd);
    if (pid < 0) { /* a kernel without pidfds */
        pidfd = -1;
        pid = sp_raw_clone(flags, s->stack + sizeof(s->stack), a2l_child, s, NULL);
    }
    s->grand_pid = pid;
    s->pidfd = pidfd;
    return pid > 0 ? 0 : 1;
}

/* Starts addr2line as described in s; its pid (and pidfd, or -1), or -1.
 * Returns once it has exec'd (or died): s may then be reused. */
static pid_t spawn_a2l(spawn_space *s, int *pidfd)
{
    int subreaper = 0;
    *pidfd = -1;
    if (getpid() == 1 ||
        (raw_sys(SYS_prctl, PR_GET_CHILD_SUBREAPER, (long)&subreaper, 0, 0) == 0 && subreaper))
        return -1; /* addr2line, orphaned, would become the program's child */
    unsigned long all = ~0ul;
    int saved = errno;
    s->grand_pid = -1;
    s->pidfd = -1;
    raw_sys(SYS_rt_sigprocmask, SIG_SETMASK, (long)&all, (long)&s->mask, 8);
    long mid = sp_raw_clone(CLONE_VM | CLONE_VFORK | CLONE_FILES, s->mid_stack + sizeof(s->mid_stack),
                            a2l_middle, s, NULL);
    raw_sys(SYS_rt_sigprocmask, SIG_SETMASK, (long)&s->mask, 0, 8);
    if (mid > 0)
        while (waitpid((pid_t)mid, NULL, __WCLONE) < 0 && errno == EINTR)
            ;
    errno = saved;
    if (mid <= 0 || s->grand_pid <= 0) {
        if (s->pidfd >= 0)
            close(s->pidfd);
        return -1;
    }
    *pidfd = s->pidfd;
    return (pid_t)s->grand_pid;
}
static void kill_a2l(pid_t pid, int pidfd)
{
    if (pidfd >= 0)
        raw_sys(SYS_pidfd_send_signal, pidfd, SIGKILL, 0, 0);
    else
        kill(pid, SIGKILL); /* not reaped by init yet: it has not answered */
}
#else
#define CAN_SPAWN 0
static pid_t spawn_a2l(spawn_space *s, int *pidfd)
{
    (void)s;
    *pidfd = -1;
    return -1;
}
static void kill_a2l(pid_t pid, int pidfd)
{
    (void)pid;
    (void)pidfd;
}
#endif

static void find_addr2line(void)
{
    const char *path = getenv("PATH");
    if (!CAN_SPAWN || !path)
        return;
    while (*path) {
        const char *end = strchr(path, ':');
        size_t len = end ? (size_t)(end - path) : strlen(path);
        char cand[sizeof(sp_a2l_path)];
        if (len > 0 && len + sizeof("/addr2line") <= sizeof(cand) && path[0] == '/') {
            memcpy(cand, path, len);
            memcpy(cand + len, "/addr2line", sizeof("/addr2line"));
            if (access(cand, X_OK) == 0) {
                memcpy(sp_a2l_path, cand, sizeof(cand));
                return;
            }
        }
        if (!end)
            break;
        path = end + 1;
    }
}

void sp_symbolize_init(void) { pthread_once(&init_once, find_addr2line); }

/* ---- pipes a forked child must not keep ------------------------------- */

#define MAX_PIPE_FDS 8
static int pipe_fds[MAX_PIPE_FDS]; /* fd + 1 of each pipe end (or pidfd) open for a run; 0: free */
static pthread_mutex_t pipe_lock = PTHREAD_MUTEX_INITIALIZER;

/* A pipe for one run, both ends close-on-exec and out of the low numbers;
 * tracked (ordinary path) so that a forked child closes them. */
static int open_pipe(int fds[2], int track)
{
    if (track)
        pthread_mutex_lock(&pipe_lock);
    int rc = pipe2(fds, O_CLOEXEC);
    if (rc == 0) {
        fds[0] = sp_fd_move_high(fds[0]);
        fds[1] = sp_fd_move_high(fds[1]);
        for (int k = 0, i = 0; track && k < 2 && i < MAX_PIPE_FDS; i++)
            if (!pipe_fds[i])
                pipe_fds[i] = fds[k++] + 1;
    }
    if (track)
        pthread_mutex_unlock(&pipe_lock);
    return rc;
}

/* *at = fd, noted for a forked child to close (track). */
static void track_fd(int fd, int *at, int track)
{
    if (track)
        pthread_mutex_lock(&pipe_lock);
    *at = fd;
    for (int i = 0; track && i < MAX_PIPE_FDS; i++)
        if (!pipe_fds[i]) {
            pipe_fds[i] = fd + 1;
            break;
        }
    if (track)
        pthread_mutex_unlock(&pipe_lock);
}

static void close_pipe_end(int fd, int track)
{
    if (track)
        pthread_mutex_lock(&pipe_lock);
    for (int i = 0; track && i < MAX_PIPE_FDS; i++)
        if (pipe_fds[i] == fd + 1)
            pipe_fds[i] = 0;
    close(fd);
    if (track)
        pthread_mutex_unlock(&pipe_lock);
}

/* ---- one addr2line run ------------------------------------------------- */

/* Line `line` of addr2line's answer: function, then file:line, per address. */
static void take_line(const char *s, int line, const int *idx, sp_frame_info *out)
{
    sp_frame_info *f = &out[idx[line / 2]];
    if (line % 2 == 0) {
        if (strcmp(s, "??") != 0)
            sp_sym_copy_str(f->func, sizeof(f->func), s);
    } else if (strncmp(s, "??", 2) != 0) {
        /* "path:LINE" or "path:LINE (discriminator N)": the path and the
         * line apart; "path:?" has no line. */
        sp_sym_copy_str(f->file, sizeof(f->file), s);
        char *colon = strrchr(f->file, ':');
        if (colon && colon != f->file) {
            int l = 0;
            const char *d = colon + 1;
            while (*d >= '0' && *d <= '9' && l < 100000000)
                l = l * 10 + (*d++ - '0');
            if (d != colon + 1 || *d == '?') {
                *colon = '\0';
                f->line = l;
            }
        }
    }
}

/* Reads the 2*k lines expected on fd, until deadline_ns. 0: all read (or
 * addr2line ended early); -1: the deadline passed. */
static int read_answer(int fd, int k, const int *idx, sp_frame_info *out, uint64_t deadline_ns)
{
    char buf[1024];
    size_t have = 0;
    int line = 0, want = 2 * k, cutting = 0;
    while (line < want) {
        uint64_t now = sp_now_ns();
        if (now >= deadline_ns)
            return -1;
        uint64_t left_ms = (deadline_ns - now + 999999) / 1000000;
        struct pollfd p = {fd, POLLIN, 0};
        int r = poll(&p, 1, left_ms > 60000 ? 60000 : (int)left_ms);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return 0;
        if (r == 0)
            continue; /* the deadline is checked above */
        ssize_t got = read(fd, buf + have, sizeof(buf) - 1 - have);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return 0;
        have += (size_t)got;
        char *start = buf, *nl;
        while (line < want && (nl = memchr(start, '\n', (size_t)(buf + have - start)))) {
            *nl = '\0';
            if (!cutting) /* else its start was taken already */
                take_line(start, line, idx, out);
            line += 1;
            cutting = 0;
            start = nl + 1;
        }
        have = (size_t)(buf + have - start);
        memmove(buf, start, have);
        if (have == sizeof(buf) - 1) { /* a line longer than buf: keep its start */
            buf[have] = '\0';
            if (!cutting)
                take_line(buf, line, idx, out);
            have = 0;
            cutting = 1;
        }
    }
    return 0;
}

static void note_broken(void)
{
    if (!__atomic_exchange_n(&sp_a2l_broken, 1, __ATOMIC_RELAXED))
        sp_log(SP_LOG_WARN, "symbolize",
               "addr2line did not answer in time: stacks show module+offset from now on");
}

/* addr2line on one module for the frames idx[0..k) (k <= RUN_MAX_ADDRS). */
void sp_a2l_run(int dying, const char *path, const uintptr_t *addr, const int *idx, int k,
                sp_frame_info *out, uint64_t deadline_ns)
{
    int fds[2];
    if (open_pipe(fds, !dying) != 0)
        return;
    spawn_space *s = dying ? &dying_space : &ordinary_space;
    if (!dying)
        pthread_mutex_lock(&spawn_lock);
    int a = 0;
    s->argv[a++] = "addr2line";
    s->argv[a++] = "-f";
    s->argv[a++] = "-C";
    s->argv[a++] = "-e";
    s->argv[a++] = (char *)path;
    for (int i = 0; i < k; i++) {
        snprintf(s->args[i], sizeof(s->args[i]), "0x%lx", (unsigned long)addr[i]);
        s->argv[a++] = s->args[i];
    }
    s->argv[a] = NULL;
    int e = 0;
    for (char **p = environ; p && *p && e < MAX_ENV - 1; p++)
        if (strncmp(*p, "LD_PRELOAD=", 11) != 0)
            s->envp[e++] = *p;
    s->envp[e] = NULL;
    s->out_fd = fds[1];
    int pidfd;
    pid_t pid = spawn_a2l(s, &pidfd);
    if (!dying)
        pthread_mutex_unlock(&spawn_lock);
    close_pipe_end(fds[1], !dying);
    if (pid < 0) {
        close_pipe_end(fds[0], !dying);
        return;
    }
    __atomic_fetch_add(&a2l_runs, 1, __ATOMIC_RELAXED);
    if (pidfd >= 0)
        track_fd(sp_fd_move_high(pidfd), &pidfd, !dying);
    if (read_answer(fds[0], k, idx, out, deadline_ns) != 0) {
        kill_a2l(pid, pidfd);
        note_broken();
    }
    close_pipe_end(fds[0], !dying);
    if (pidfd >= 0)
        close_pipe_end(pidfd, !dying);
}

unsigned long sp_symbolize_runs(void) { return __atomic_load_n(&a2l_runs, __ATOMIC_RELAXED); }

/* ---- fork --------------------------------------------------------------- */

void sp_symbolize_fork_prepare(void) { pthread_mutex_lock(&pipe_lock); }

void sp_symbolize_fork_parent(void) { pthread_mutex_unlock(&pipe_lock); }

/* A forked child: the pipes it inherited closed, fresh locks. */
void sp_a2l_fork_child(int prepared)
{
    for (int i = 0; i < MAX_PIPE_FDS; i++) {
        if (pipe_fds[i])
            close(pipe_fds[i] - 1);
        pipe_fds[i] = 0;
    }
    if (prepared)
        pthread_mutex_unlock(&pipe_lock);
    else /* a raw fork: another thread may have held it */
        pthread_mutex_init(&pipe_lock, NULL);
    pthread_mutex_init(&spawn_lock, NULL);
}
