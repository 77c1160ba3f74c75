/*
 * symbolize.c - function names and file:line for recorded stacks.
 *
 * dladdr() names only exported symbols. Like the sanitizers, which call an
 * external symbolizer, safepin asks addr2line (binutils) for function,
 * file and line, one process per module of a stack, with LD_PRELOAD removed
 * from its environment. Falls back to dladdr when addr2line is missing or
 * symbolize=0.
 *
 * Printing a diagnostic must not allocate (it may run inside free(), or in
 * a signal handler). posix_spawn itself does not, but building its file
 * actions does: so they are built once, by sp_symbolize_init(), and name a
 * descriptor safepin reserves (on /dev/null between runs). Each run moves
 * its pipe's write end onto that descriptor for the spawn, then puts
 * /dev/null back; spawn_lock serializes runs.
 */
#include "symbolize.h"
#include "options.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static void copy_str(char *dst, size_t n, const char *src)
{
    size_t l = strlen(src);
    if (l >= n)
        l = n - 1;
    memcpy(dst, src, l);
    dst[l] = '\0';
}

/* Address as addr2line wants it: relative to the load base for shared
 * objects and PIE, absolute for ET_EXEC. */
static uintptr_t file_address(uintptr_t pc, const Dl_info *info)
{
    const ElfW(Ehdr) *eh = info->dli_fbase;
    if (eh && eh->e_type == ET_EXEC)
        return pc;
    return pc - (uintptr_t)info->dli_fbase;
}

static posix_spawn_file_actions_t spawn_fa;
static int spawn_fd = -1; /* the reserved descriptor; -1: no spawning (spawn_lock) */
static struct stat null_st; /* what spawn_fd is between runs: /dev/null */
static pthread_once_t spawn_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t spawn_lock = PTHREAD_MUTEX_INITIALIZER;

/* /dev/null on a high number, out of the way of programs that expect the
 * lowest; under a low descriptor limit, on any. */
static int open_null_reserved(void)
{
    int a = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (a < 0)
        return -1;
    int fd = fcntl(a, F_DUPFD_CLOEXEC, 900);
    if (fd < 0)
        return a;
    close(a);
    return fd;
}

static void spawn_init(void)
{
    int fd = open_null_reserved();
    if (fd < 0)
        return;
    if (fstat(fd, &null_st) == 0 && posix_spawn_file_actions_init(&spawn_fa) == 0) {
        if (posix_spawn_file_actions_adddup2(&spawn_fa, fd, 1) == 0 &&
            posix_spawn_file_actions_addopen(&spawn_fa, 2, "/dev/null", O_WRONLY, 0) == 0) {
            spawn_fd = fd;
            return;
        }
        posix_spawn_file_actions_destroy(&spawn_fa);
    }
    close(fd);
}

void sp_symbolize_init(void) { pthread_once(&spawn_once, spawn_init); }

/* spawn_fd is still ours: a program that closed every descriptor may have
 * reused its number, and then it is left alone. */
static int spawn_fd_intact(void)
{
    struct stat st;
    return fstat(spawn_fd, &st) == 0 && st.st_rdev == null_st.st_rdev &&
           st.st_ino == null_st.st_ino;
}

/* Puts /dev/null back on spawn_fd, so that it holds no pipe open (the
 * reader would never see the pipe's end); if that fails, gives it up. */
static void spawn_fd_release(void)
{
    int n = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (n < 0 || dup3(n, spawn_fd, O_CLOEXEC) < 0) {
        close(spawn_fd);
        spawn_fd = -1;
    }
    if (n >= 0)
        close(n);
}

/* addr2line with its stdout on pipe_w; 0 and its pid on success. */
static int spawn_addr2line(int pipe_w, char **argv, char **envp, int may_wait, pid_t *pid)
{
    if (may_wait)
        pthread_mutex_lock(&spawn_lock);
    else if (pthread_mutex_trylock(&spawn_lock) != 0)
        return -1; /* dying, and another thread was symbolizing */
    int rc = -1;
    if (spawn_fd >= 0 && spawn_fd_intact() && dup3(pipe_w, spawn_fd, O_CLOEXEC) >= 0) {
        rc = posix_spawnp(pid, "addr2line", &spawn_fa, NULL, argv, envp) == 0 ? 0 : -1;
        spawn_fd_release();
    }
    pthread_mutex_unlock(&spawn_lock);
    return rc;
}

/* Run addr2line on one module for the frames idx[0..k). */
static void run_addr2line(const char *path, const uintptr_t *addr, const int *idx, int k,
                          sp_frame_info *out, int may_wait)
{
    char args[64][24];
    char *argv[72];
    int a = 0;
    argv[a++] = "addr2line";
    argv[a++] = "-f";
    argv[a++] = "-C";
    argv[a++] = "-e";
    argv[a++] = (char *)path;
    for (int i = 0; i < k && i < 64; i++) {
        snprintf(args[i], sizeof(args[i]), "0x%lx", (unsigned long)addr[i]);
        argv[a++] = args[i];
    }
    argv[a] = NULL;

    char *envp[512];
    int e = 0;
    for (char **p = environ; p && *p && e < 511; p++)
        if (strncmp(*p, "LD_PRELOAD=", 11) != 0)
            envp[e++] = *p;
    envp[e] = NULL;

    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return;
    pid_t pid;
    int rc = spawn_addr2line(fds[1], argv, envp, may_wait, &pid);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        return;
    }
    char buf[16384];
    size_t got = 0;
    for (;;) {
        ssize_t r = read(fds[0], buf + got, sizeof(buf) - 1 - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
        if (got >= sizeof(buf) - 1)
            break;
    }
    buf[got] = '\0';
    close(fds[0]);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    /* Two lines per address: function, then file:line. */
    char *save = NULL, *line = strtok_r(buf, "\n", &save);
    for (int i = 0; i < k && line; i++) {
        char *fileline = strtok_r(NULL, "\n", &save);
        if (!fileline)
            break;
        if (strcmp(line, "??") != 0)
            copy_str(out[idx[i]].func, sizeof(out[idx[i]].func), line);
        if (strncmp(fileline, "??", 2) != 0)
            copy_str(out[idx[i]].file, sizeof(out[idx[i]].file), fileline);
        line = strtok_r(NULL, "\n", &save);
    }
}

/* Results by pc, so a stack seen again costs no new addr2line. */
#define CACHE_SIZE 512
static struct {
    void *pc;
    int adjusted;
    sp_frame_info fi;
} cache[CACHE_SIZE];
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned cache_slot(void *pc, int adjusted)
{
    uintptr_t x = (uintptr_t)pc * 0x9E3779B97F4A7C15ull + (uintptr_t)adjusted;
    return (unsigned)(x >> 40) % CACHE_SIZE;
}

static void symbolize(void *const *pc, int n, sp_frame_info *out, int use_cache);

void sp_symbolize(void *const *pc, int n, sp_frame_info *out) { symbolize(pc, n, out, 1); }
void sp_symbolize_dying(void *const *pc, int n, sp_frame_info *out) { symbolize(pc, n, out, 0); }

static void symbolize(void *const *pc, int n, sp_frame_info *out, int use_cache)
{
    Dl_info info[SP_SYM_MAX];
    int have[SP_SYM_MAX];
    if (n > SP_SYM_MAX)
        n = SP_SYM_MAX;
    for (int i = 0; i < n; i++) {
        memset(&out[i], 0, sizeof(out[i]));
        have[i] = dladdr(pc[i], &info[i]) && info[i].dli_fname;
        if (!have[i])
            continue;
        const char *mod = strrchr(info[i].dli_fname, '/');
        copy_str(out[i].module, sizeof(out[i].module), mod ? mod + 1 : info[i].dli_fname);
        out[i].module_offset = (uintptr_t)pc[i] - (uintptr_t)info[i].dli_fbase;
        if (info[i].dli_sname) {
            copy_str(out[i].func, sizeof(out[i].func), info[i].dli_sname);
            out[i].func_offset = (uintptr_t)pc[i] - (uintptr_t)info[i].dli_saddr;
            out[i].has_offset = 1;
        }
    }
    if (!sp_opt.symbolize)
        return;
    int done[SP_SYM_MAX] = {0};
    if (use_cache)
        pthread_mutex_lock(&cache_lock);
    for (int i = 0; use_cache && i < n; i++) {
        unsigned c = cache_slot(pc[i], i > 0);
        if (have[i] && cache[c].pc == pc[i] && cache[c].adjusted == (i > 0)) {
            out[i] = cache[c].fi;
            done[i] = 1;
        }
    }
    if (use_cache)
        pthread_mutex_unlock(&cache_lock);
    int was_done[SP_SYM_MAX];
    memcpy(was_done, done, sizeof(done));
    for (int i = 0; i < n; i++) {
        if (!have[i] || done[i])
            continue;
        uintptr_t addr[SP_SYM_MAX];
        int idx[SP_SYM_MAX], k = 0;
        const char *path = info[i].dli_fname;
        char exe[512];
        if (!path[0]) { /* the main program */
            ssize_t l = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
            if (l <= 0)
                continue;
            exe[l] = '\0';
            path = exe;
        }
        for (int j = i; j < n; j++) {
            if (!have[j] || done[j] || info[j].dli_fbase != info[i].dli_fbase)
                continue;
            /* Return addresses point after the call: look up the call. */
            uintptr_t p = (uintptr_t)pc[j] - (j > 0 ? 1 : 0);
            addr[k] = file_address(p, &info[j]);
            idx[k++] = j;
            done[j] = 1;
        }
        run_addr2line(path, addr, idx, k, out, use_cache);
    }
    if (!use_cache)
        return;
    pthread_mutex_lock(&cache_lock);
    for (int i = 0; i < n; i++) {
        if (!have[i] || was_done[i])
            continue;
        unsigned c = cache_slot(pc[i], i > 0);
        cache[c].pc = pc[i];
        cache[c].adjusted = i > 0;
        cache[c].fi = out[i];
    }
    pthread_mutex_unlock(&cache_lock);
}

int sp_format_frame(char *buf, size_t n, int i, void *pc, const sp_frame_info *f)
{
    const char *mod = f->module[0] ? f->module : "<main>";
    if (f->file[0] && f->func[0])
        return snprintf(buf, n, "    #%d %p in %s %s (%s+0x%lx)\n", i, pc, f->func, f->file, mod,
                        (unsigned long)f->module_offset);
    if (f->func[0] && f->has_offset)
        return snprintf(buf, n, "    #%d %p in %s+0x%lx (%s+0x%lx)\n", i, pc, f->func,
                        (unsigned long)f->func_offset, mod, (unsigned long)f->module_offset);
    if (f->func[0])
        return snprintf(buf, n, "    #%d %p in %s (%s+0x%lx)\n", i, pc, f->func, mod,
                        (unsigned long)f->module_offset);
    if (f->module[0])
        return snprintf(buf, n, "    #%d %p in ?? (%s+0x%lx)\n", i, pc, mod,
                        (unsigned long)f->module_offset);
    return snprintf(buf, n, "    #%d %p in ??\n", i, pc);
}
