/*
 * last_thread_exit - a process ends when its last thread ends, however that
 * thread ends.
 *
 * The program registers and unregisters 4 MiB (the runtime is in use, and
 * under safepin its thread runs: the release keeps a revive grace). Then:
 *  (a) a clone() without CLONE_VM: the child, a process of one thread,
 *      registers and unregisters 64 KiB of its own and returns from its
 *      function, which glibc's clone ends with the exit system call (no
 *      exit(), no atexit, no pthread_exit). Three such children, one after
 *      another; a child that has not ended within 10 s (safepin's thread
 *      keeping it alive) is killed and counted;
 *  (b) main prints OK and ends its own thread with syscall(SYS_exit, 0),
 *      which ends the process with status 0 only once no other thread is
 *      left. A process still alive at run.sh's timeout (20 s) fails.
 * Bare, each child ends at once and so does the process.
 */
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "legacy.h"

#define BIG (4ul << 20)
#define SMALL (64ul << 10)
#define CHILD_STACK (256ul << 10)

static int child(void *arg)
{
    (void)arg;
    char *own = aligned_alloc(4096, SMALL);
    if (!own)
        return 2;
    memset(own, 3, SMALL);
    if (hipHostRegister(own, SMALL, 0) != hipSuccess || hipHostUnregister(own) != hipSuccess)
        return 3;
    return 0; /* glibc's clone: SYS_exit with this status */
}

int main(void)
{
    char *big = aligned_alloc(4096, BIG);
    if (!big)
        return 2;
    memset(big, 1, BIG);
    CHECK(hipHostRegister(big, BIG, 0));
    CHECK(hipHostUnregister(big));
    char *stack = malloc(CHILD_STACK);
    if (!stack)
        return 2;
    for (int round = 0; round < 3; round++) {
        pid_t c = clone(child, stack + CHILD_STACK, SIGCHLD, NULL);
        if (c < 0) {
            perror("clone");
            return 2;
        }
        int st = 0, ended = 0;
        for (int i = 0; i < 1000 && !ended; i++) {
            if (waitpid(c, &st, WNOHANG) == c)
                ended = 1;
            else
                usleep(10 * 1000);
        }
        if (!ended) {
            kill(c, SIGKILL);
            waitpid(c, NULL, 0);
            fprintf(stderr, "clone child %d: still alive after 10 s (its only thread had exited)\n",
                    round);
            (*legacy_failures())++;
        } else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "clone child %d: ended with status 0x%x\n", round, st);
            (*legacy_failures())++;
        }
    }
    free(stack);
    free(big);
    if (legacy_finish() != 0)
        return 1;
    fflush(NULL);
    syscall(SYS_exit, 0); /* the process ends when its last thread does */
    return 1;
}
