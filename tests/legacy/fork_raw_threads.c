/*
 * fork_raw_threads - a fork system call (syscall(SYS_fork), no handlers)
 * while other threads are inside munmap, madvise, mmap and register calls
 * on registered memory.
 *
 * Three threads loop: map 64 KiB, register it, then madvise(DONTNEED) it,
 * map MAP_FIXED over it or unmap it (each still registered: the program
 * forgot), and unregister where it still can. The main thread forks 12
 * times with the raw system call; each child calls munmap, madvise, mmap
 * (MAP_FIXED) on memory of its own and _Fork(), and exits 0 (only calls
 * that are plain system calls on Linux). A child that does not finish
 * within 5 s is a hang. (Not fork(): its handlers include the runtime's,
 * whose lock a thread in a runtime call held at the raw fork.)
 */
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "legacy.h"

#define LEN (64ul << 10)
#define FORKS 12

pid_t _Fork(void);

static volatile int stop;

static void *churn(void *arg)
{
    int kind = (int)(long)arg;
    while (!stop) {
        char *p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            continue;
        memset(p, 1, LEN);
        if (hipHostRegister(p, LEN, 0) != hipSuccess) {
            munmap(p, LEN);
            continue;
        }
        if (kind == 0) {
            madvise(p, LEN, MADV_DONTNEED);
            hipHostUnregister(p);
        } else if (kind == 1) {
            mmap(p, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        }
        munmap(p, LEN);
    }
    return NULL;
}

static int child(void)
{
    char *p = mmap(NULL, 4 * LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return 3;
    madvise(p, LEN, MADV_DONTNEED);
    if (mmap(p, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != p)
        return 4;
    munmap(p, 4 * LEN);
    pid_t g = _Fork();
    if (g == 0)
        _exit(0);
    if (g > 0)
        waitpid(g, NULL, 0);
    return 0;
}

int main(void)
{
    char *warm = aligned_alloc(4096, LEN);
    if (!warm)
        return 2;
    CHECK(hipHostRegister(warm, LEN, 0));
    CHECK(hipHostUnregister(warm));
    pthread_t t[3];
    for (long i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, churn, (void *)i);
    int hung = 0, failed = 0;
    for (int f = 0; f < FORKS; f++) {
        usleep(3000);
        pid_t c = (pid_t)syscall(SYS_fork);
        if (c < 0)
            continue;
        if (c == 0)
            syscall(SYS_exit_group, child());
        int st = 0, done = 0;
        for (int i = 0; i < 500 && !done; i++) {
            if (waitpid(c, &st, WNOHANG) == c)
                done = 1;
            else
                usleep(10 * 1000);
        }
        if (!done) {
            kill(c, SIGKILL);
            waitpid(c, NULL, 0);
            hung++;
        } else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            failed++;
        }
    }
    stop = 1;
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    if (hung || failed) {
        fprintf(stderr, "%d of %d children hung, %d failed\n", hung, FORKS, failed);
        (*legacy_failures())++;
    }
    free(warm);
    return legacy_finish();
}
