/*
 * fork_unregister.c - a program that forks while another of its threads
 * keeps calling cudaHostUnregister (its own library's, rt/libnotrt.so: no
 * driver call that a fork could leave locked); each child makes one more
 * call and exits. No child may hang: a lock held at the fork stays held
 * forever in the child, and a lookup in the dynamic loader on each call
 * would hold the loader's.
 */
#include <pthread.h>
#include <sys/wait.h>

#include "legacy_cuda.h"

#define FORKS 200

int cudaHostUnregister(void *p);

static char buf[64];
static volatile int stop;

static void *churn(void *arg)
{
    (void)arg;
    while (!stop)
        (void)cudaHostUnregister(buf);
    return NULL;
}

int main(void)
{
    (void)cudaHostUnregister(buf); /* the double's first answer is 0, then 99 */
    pthread_t t;
    if (pthread_create(&t, NULL, churn, NULL) != 0)
        return 2;
    int bad = 0;
    for (int i = 0; i < FORKS && !bad; i++) {
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0)
            _exit(cudaHostUnregister(buf) == 99 ? 0 : 1);
        int st = 0;
        if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "child %d: status 0x%x (want an exit with 0)\n", i, st);
            bad = 1;
        }
    }
    stop = 1;
    pthread_join(t, NULL);
    if (bad)
        return 1;
    printf("OK\n");
    return 0;
}
