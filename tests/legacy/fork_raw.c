/*
 * fork_raw - forks that run no fork handler: _Fork() and a fork system
 * call made with syscall(), from a single-threaded program.
 *
 * The program registers and unregisters 4 MiB (the runtime is in use, and
 * under safepin its thread runs: the release keeps a revive grace), then
 * registers 64 KiB it keeps registered, then forks without handlers. The
 * child maps MAP_FIXED over that range, registers and unregisters memory of
 * its own, and exits 0. A child that does not finish within 10 s is a hang.
 */
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "legacy.h"

#define LEN (64ul << 10)

pid_t _Fork(void);

static int child_work(char *kept)
{
    char *q = mmap(kept, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (q != kept)
        return 3;
    memset(q, 7, LEN);
    char *own = aligned_alloc(4096, LEN);
    if (!own || hipHostRegister(own, LEN, 0) != hipSuccess || hipHostUnregister(own) != hipSuccess)
        return 4;
    free(own);
    return 0;
}

static void timed_wait(pid_t c, const char *how)
{
    for (int i = 0; i < 1000; i++) {
        int st = 0;
        pid_t w = waitpid(c, &st, WNOHANG);
        if (w == c) {
            if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                fprintf(stderr, "%s: child failed (status 0x%x)\n", how, st);
                (*legacy_failures())++;
            }
            return;
        }
        usleep(10 * 1000);
    }
    kill(c, SIGKILL);
    waitpid(c, NULL, 0);
    fprintf(stderr, "%s: the child hung\n", how);
    (*legacy_failures())++;
}

int main(void)
{
    char *warm = aligned_alloc(4096, 64 * LEN);
    if (!warm)
        return 2;
    memset(warm, 1, 64 * LEN);
    CHECK(hipHostRegister(warm, 64 * LEN, 0));
    CHECK(hipHostUnregister(warm));
    for (int how = 0; how < 2; how++) {
        char *kept = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (kept == MAP_FAILED)
            return 2;
        memset(kept, 1, LEN);
        CHECK(hipHostRegister(kept, LEN, 0));
        fflush(NULL);
        pid_t c = how == 0 ? _Fork() : (pid_t)syscall(SYS_fork);
        if (c < 0)
            return 2;
        if (c == 0)
            _exit(child_work(kept));
        timed_wait(c, how == 0 ? "_Fork" : "syscall(SYS_fork)");
        CHECK(hipHostUnregister(kept));
        munmap(kept, LEN);
    }
    free(warm);
    return legacy_finish();
}
