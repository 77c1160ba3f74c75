/*
 * fork_hang - 200 forks while another thread keeps calling into the
 * registration hooks and the allocator, with one registration live.
 *
 * A fork copies whatever locks other threads held at that moment. If a
 * library's child fork handler (the runtime's frees memory) runs into a
 * lock that another thread of the parent held, the child hangs inside
 * fork() forever. Bare, no child ever hangs. Each child exits at once;
 * the parent gives each 10 seconds.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include "legacy.h"

#define FORKS 200
#define OWN (64u << 10)

static int stop; /* atomic */

/* This thread's buffers and the runtime's records of its device work come
 * from the same allocator arena: the child handler of the runtime frees
 * those records next to registered memory. */
static void *churn(void *arg)
{
    (void)arg;
    hipStream_t s;
    if (hipStreamCreateWithFlags(&s, hipStreamNonBlocking) != hipSuccess)
        return NULL;
    void *keep = malloc(OWN), *q = malloc(OWN);
    if (!keep || !q || hipHostRegister(keep, OWN, 0) != hipSuccess)
        return NULL;
    static struct kargs k = { .work_us = 200 };
    while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
        (void)simhipLaunchKernel(s, add_kernel, &k);
        if (hipHostRegister(q, OWN, 0) == hipSuccess) {
            hipPointerAttribute_t a;
            (void)hipPointerGetAttributes(&a, q);
            (void)hipHostUnregister(q);
        }
        void *t = malloc(1 + (size_t)rand() % 4000);
        free(t);
    }
    (void)hipStreamSynchronize(s);
    (void)hipHostUnregister(keep);
    (void)hipStreamDestroy(s);
    free(q);
    free(keep);
    return NULL;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(void)
{
    size_t len = 1u << 20;
    void *live = malloc(len);
    if (!live)
        return 2;
    CHECK(hipHostRegister(live, len, 0));
    pthread_t t;
    if (pthread_create(&t, NULL, churn, NULL) != 0)
        return 2;
    int hung = 0, failed = 0;
    for (int i = 0; i < FORKS && !hung; i++) {
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0)
            _exit(0);
        if (pid < 0) {
            failed++;
            continue;
        }
        int st = 0;
        pid_t got = 0;
        double until = now_s() + 10;
        while ((got = waitpid(pid, &st, WNOHANG)) == 0 && now_s() < until)
            usleep(1000);
        if (got == 0) {
            fprintf(stderr, "fork %d: the child hangs (10 s); killed\n", i);
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            hung = 1;
        } else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "fork %d: child status 0x%x\n", i, st);
            failed++;
        }
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    pthread_join(t, NULL);
    CHECK(hipHostUnregister(live));
    free(live);
    if (hung || failed)
        (*legacy_failures())++;
    return legacy_finish();
}
