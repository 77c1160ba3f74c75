/* realloc of registered memory: contents, NULL/0 forms; system() with pending releases */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spawn.h>
#include <sys/wait.h>
#include "hip_check.h"
extern char **environ;
int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    char *p = malloc(100000);
    for (int i = 0; i < 100000; i++) p[i] = (char)i;
    char *base = (char *)(((unsigned long)p + 4095) & ~4095ul);
    printf("reg %d\n", hipHostRegister(base, 65536, 0));
    char *q = realloc(p, 200000);
    int ok = q != NULL;
    for (int i = 0; ok && i < 100000; i++) if (q[i] != (char)i) ok = 0;
    printf("grow ok %d\n", ok);
    char *r = realloc(q, 50);
    ok = r != NULL;
    for (int i = 0; ok && i < 50; i++) if (r[i] != (char)i) ok = 0;
    printf("shrink ok %d\n", ok);
    char *z = realloc(NULL, 10); printf("realloc NULL %d\n", z != NULL);
    free(r);
    char *m = aligned_alloc(4096, 1 << 20);
    hipHostRegister(m, 1 << 20, 0);
    hipHostUnregister(m);
    free(m);
    printf("system %d\n", system("exit 3") >> 8);
    pid_t pid; char *argv[] = {"sh", "-c", "exit 5", NULL};
    int st = posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ);
    waitpid(pid, &st, 0);
    printf("spawn %d\n", WEXITSTATUS(st));
    z = realloc(z, 0); printf("realloc 0 %d\n", z == NULL);
    return 0;
}
