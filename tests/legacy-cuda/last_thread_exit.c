/*
 * last_thread_exit.c - a driver-API process ends when its last thread ends,
 * however that thread ends.
 *
 * The program registers and unregisters 4 MiB (under safepin its thread
 * runs: the release keeps a revive grace). Then:
 *  (a) a clone() without CLONE_VM: the child, a process of one thread,
 *      registers and unregisters 64 KiB of its own and returns from its
 *      function, which glibc's clone ends with the exit system call. Two
 *      such children; one that has not ended within 10 s is killed and
 *      counted;
 *  (b) main prints OK and ends its own thread with syscall(SYS_exit, 0): the
 *      process ends with status 0 once no other thread is left. A process
 *      still alive at run.sh's timeout fails.
 * Bare, each child ends at once and so does the process.
 */
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "legacy_cuda.h"

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
    if (cuMemHostRegister_v2(own, SMALL, 0) != CUDA_SUCCESS || cuMemHostUnregister(own) != CUDA_SUCCESS)
        return 3;
    return 0; /* glibc's clone: SYS_exit with this status */
}

int main(void)
{
    int failures = 0;
    lc_init();
    char *big = aligned_alloc(4096, BIG);
    if (!big)
        return 2;
    memset(big, 1, BIG);
    CHECK(cuMemHostRegister_v2(big, BIG, 0));
    CHECK(cuMemHostUnregister(big));
    char *stack = malloc(CHILD_STACK);
    if (!stack)
        return 2;
    for (int round = 0; round < 2; round++) {
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
            failures++;
        } else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "clone child %d: ended with status 0x%x\n", round, st);
            failures++;
        }
    }
    free(stack);
    free(big);
    if (failures) {
        fprintf(stderr, "FAILED: %d\n", failures);
        return 1;
    }
    printf("OK\n");
    fflush(NULL);
    syscall(SYS_exit, 0); /* the process ends when its last thread does */
    return 1;
}
