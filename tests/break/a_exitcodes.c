/* exit statuses through every exit path while a registration is live/pending */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "hip_check.h"
static void ath(void) { printf("atexit\n"); fflush(stdout); }
static void *thr_exit(void *a) { (void)a; exit(7); }
int main(int argc, char **argv)
{
    const char *m = argc > 1 ? argv[1] : "exit";
    char *p = aligned_alloc(4096, 1 << 20);
    hipHostRegister(p, 1 << 20, 0);
    char *q = aligned_alloc(4096, 1 << 20);
    hipHostRegister(q, 1 << 20, 0);
    hipHostUnregister(q);
    atexit(ath);
    printf("start\n");
    if (!strcmp(m, "exit")) exit(3);
    if (!strcmp(m, "_exit")) { fflush(stdout); _exit(4); }
    if (!strcmp(m, "quick")) quick_exit(5);
    if (!strcmp(m, "ret")) return 6;
    if (!strcmp(m, "thread")) { pthread_t t; pthread_create(&t, 0, thr_exit, 0); pthread_join(t, 0); }
    if (!strcmp(m, "abort")) { fflush(stdout); abort(); }
    if (!strcmp(m, "kill")) { fflush(stdout); raise(SIGTERM); }
    if (!strcmp(m, "exit256")) exit(256 + 9);
    if (!strcmp(m, "fork")) {
        pid_t c = fork();
        if (c == 0) { hipHostUnregister(p); exit(11); }
        int st; waitpid(c, &st, 0); printf("child %d\n", WEXITSTATUS(st)); exit(12);
    }
    if (!strcmp(m, "forkfree")) {
        pid_t c = fork();
        if (c == 0) { free(p); free(q); _exit(13); }
        int st; waitpid(c, &st, 0); printf("child %d\n", WEXITSTATUS(st)); exit(14);
    }
    return 0;
}
