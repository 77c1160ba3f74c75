/*
 * fork_attr_race - attr_race in a forked child, on memory its parent had
 * registered.
 *
 * The parent registers a buffer and forks. The child re-pins it in a loop
 * (unregister, register: the first unregister is of the parent's
 * registration, which safepin never tracked in the child, G9) while a
 * monitoring thread keeps asking the runtime what the buffer is. The query
 * and the unregister touch the same runtime object at the same time: the
 * runtime crashes (the child dies of SIGABRT, and so does the parent that
 * sees it). Under safepin the queries are serialized with the unregisters
 * (G5), even while the child's registry is empty.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include "legacy.h"
#include "legacy_fork.h"

#define ITERS 2000
#define BYTES (64u << 10)

static char *buf;
static atomic_int done;

static void *monitor(void *arg)
{
    (void)arg;
    while (!atomic_load(&done)) {
        hipPointerAttribute_t attr;
        memset(&attr, 0, sizeof(attr));
        hipError_t err = hipPointerGetAttributes(&attr, buf);
        if (err != hipSuccess && err != hipErrorInvalidValue) {
            fprintf(stderr, "hipPointerGetAttributes failed: %s (%d)\n", hipGetErrorName(err),
                    (int)err);
            exit(1);
        }
    }
    return NULL;
}

static int child(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, monitor, NULL) != 0)
        return 2;
    for (int i = 0; i < ITERS; i++) {
        CHECK(hipHostUnregister(buf));
        CHECK(hipHostRegister(buf, BYTES, 0));
    }
    atomic_store(&done, 1);
    pthread_join(t, NULL);
    CHECK(hipHostUnregister(buf));
    return 0;
}

int main(void)
{
    buf = aligned_alloc(4096, BYTES);
    if (!buf)
        return 2;
    memset(buf, 1, BYTES);
    CHECK(hipHostRegister(buf, BYTES, 0));
    fflush(NULL);
    pid_t c = fork();
    if (c == 0)
        _exit(child());
    int st = 0;
    if (c > 0 && waitpid(c, &st, 0) == c && WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT)
        abort(); /* the child's runtime abort, as the parent's own */
    if (c < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "child failed (status 0x%x)\n", st);
        (*legacy_failures())++;
    }
    CHECK(hipHostUnregister(buf));
    free(buf);
    return legacy_finish();
}
