/*
 * first_allocs - a process whose first registrations are made by many
 * threads at once.
 *
 * The program runs itself CHILDREN times; each child starts THREADS
 * threads that meet at a barrier, each registers a buffer of its own, lets
 * a device-to-host copy write it, unregisters and frees it, and ends. Every
 * child must exit 0 with the bytes the device wrote. Bare, nothing in it
 * is racy. A tool that allocates through glibc's allocator behind a
 * sanitizer's (whose malloc glibc's never saw) must have that allocator
 * started before the program's threads race into it: glibc starts it on
 * first use without a lock, and threads that raced there abort at their
 * exit ("a->attached_threads > 0"), in about one child in ten.
 * Prints "children C ok" and OK.
 */
#include <pthread.h>
#include <spawn.h>
#include <sys/wait.h>
#include "legacy.h"

#define CHILDREN 16
#define THREADS 32
#define N 4096 /* ints */

extern char **environ;
static pthread_barrier_t start;
static int *dev;
static int bad;

static void *worker(void *arg)
{
    long id = (long)arg;
    int *buf = aligned_alloc(4096, N * sizeof(int));
    if (!buf)
        exit(2);
    pthread_barrier_wait(&start);
    CHECK(hipHostRegister(buf, N * sizeof(int), 0));
    CHECK(hipMemcpyAsync(buf, dev, N * sizeof(int), hipMemcpyDeviceToHost, 0));
    CHECK(hipStreamSynchronize(0));
    CHECK(hipHostUnregister(buf));
    if (!legacy_verify("buffer", buf, N, 0, 7, 0)) {
        fprintf(stderr, "thread %ld: wrong bytes\n", id);
        __atomic_add_fetch(&bad, 1, __ATOMIC_RELAXED);
    }
    free(buf);
    return NULL;
}

static int child(void)
{
    int *host = malloc(N * sizeof(int));
    if (!host)
        return 2;
    legacy_fill(host, N, 0, 7);
    CHECK(hipMalloc((void **)&dev, N * sizeof(int)));
    CHECK(hipMemcpy(dev, host, N * sizeof(int), hipMemcpyHostToDevice));
    free(host);
    pthread_barrier_init(&start, NULL, THREADS);
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++)
        if (pthread_create(&t[i], NULL, worker, (void *)i) != 0)
            return 2;
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    CHECK(hipFree(dev));
    return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "child") == 0)
        return child();
    int ok = 0;
    for (int i = 0; i < CHILDREN; i++) {
        char *args[] = {argv[0], "child", NULL};
        pid_t pid;
        int st;
        if (posix_spawn(&pid, "/proc/self/exe", NULL, NULL, args, environ) != 0 ||
            waitpid(pid, &st, 0) != pid)
            return 2;
        if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
            ok++;
        else
            fprintf(stderr, "child %d: %s %d\n", i, WIFEXITED(st) ? "exit" : "signal",
                    WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
    }
    printf("children %d ok\n", ok);
    if (ok != CHILDREN)
        (*legacy_failures())++;
    return legacy_finish();
}
