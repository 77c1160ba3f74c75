/*
 * fork_threads - forks while other threads register, unregister and free.
 *
 * Two threads loop: malloc 64 KiB, register, unregister, free. The main
 * thread forks 60 times; each child runs two threads that register,
 * unregister and free 100 fresh 64 KiB blocks, and exits 0 unless a call
 * failed or the runtime aborted. Bare, a block is freed only after its
 * unregister returned, so a child never meets its runtime holding a block
 * its allocator hands out again. Under safepin a release may still be
 * pending at the fork (another thread's, begun while the fork waited for
 * the earlier ones): its block must not be handed back to the child's
 * allocator, whose threads reuse the parent's arenas.
 */
#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include "legacy.h"

#define SZ (64u << 10)
#define FORKS 60

static int stop; /* atomic */

static void *worker(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
        char *m = malloc(SZ);
        if (!m)
            return NULL;
        memset(m, 1, SZ);
        if (hipHostRegister(m, SZ, 0) == hipSuccess)
            (void)hipHostUnregister(m);
        free(m);
    }
    return NULL;
}

static void *child_work(void *arg)
{
    (void)arg;
    long errors = 0;
    for (int k = 0; k < 100; k++) {
        char *m = malloc(SZ);
        if (!m)
            return (void *)1;
        hipError_t e = hipHostRegister(m, SZ, 0);
        if (e != hipSuccess)
            errors++;
        else if (hipHostUnregister(m) != hipSuccess)
            errors++;
        free(m);
    }
    return (void *)errors;
}

int main(void)
{
    pthread_t w[2];
    for (int i = 0; i < 2; i++)
        if (pthread_create(&w[i], NULL, worker, NULL) != 0)
            return 2;
    int failed = 0;
    for (int i = 0; i < FORKS; i++) {
        usleep(2000);
        fflush(NULL);
        pid_t c = fork();
        if (c == 0) {
            pthread_t t[2];
            void *r[2] = { 0, 0 };
            for (int k = 0; k < 2; k++)
                if (pthread_create(&t[k], NULL, child_work, NULL) != 0)
                    _exit(3);
            for (int k = 0; k < 2; k++)
                pthread_join(t[k], &r[k]);
            if (r[0] || r[1])
                fprintf(stderr, "child: %ld of its own registrations failed\n",
                        (long)r[0] + (long)r[1]);
            _exit(r[0] || r[1] ? 1 : 0);
        }
        int st = 0;
        if (c < 0 || waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "fork %d: child failed (status 0x%x%s)\n", i, st,
                    WIFSIGNALED(st) ? ", killed by a signal" : "");
            failed++;
        }
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    for (int i = 0; i < 2; i++)
        pthread_join(w[i], NULL);
    if (failed)
        (*legacy_failures())++;
    return legacy_finish();
}
