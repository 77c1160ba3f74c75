/*
 * fork_inherit - what a forked child inherits, and what it may do with it.
 *
 * Bare, an unregister has completed when it returns, so a child forked
 * right after sees memory that was never registered. Under safepin it is
 * pending for a while (the real unregister runs on the reaper thread): the
 * fork must not hand the child that pending state (fork_freed: the same
 * for a free).
 *   pending   the parent unregisters p while the device is busy and forks:
 *             the child asks p's attributes and gets the answer for memory
 *             never registered;
 *   threads   the child runs four threads of registrations of its own, one
 *             of them on memory the parent still has registered;
 *   exec      the child execs a program that registers memory.
 * Every child must exit 0.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include "legacy.h"
#include "legacy_fork.h"

#define OWN (64u << 10)

static void *live; /* registered by the parent throughout */

static void pending(hipStream_t s)
{
    void *p = aligned_alloc(4096, OWN), *never = aligned_alloc(4096, OWN);
    if (!p || !never)
        exit(2);
    CHECK(hipHostRegister(p, OWN, 0));
    legacy_busy(s, 100 * 1000);
    CHECK(hipHostUnregister(p));
    fflush(NULL);
    pid_t c = fork();
    if (c == 0) {
        hipPointerAttribute_t a, b;
        memset(&a, 0, sizeof(a));
        memset(&b, 0, sizeof(b));
        hipError_t ea = hipPointerGetAttributes(&a, p);
        hipError_t eb = hipPointerGetAttributes(&b, never);
        if (ea != eb || a.devicePointer != b.devicePointer) {
            fprintf(stderr, "pending: the child sees the unregistered memory as registered "
                            "(%d, device pointer %p) where never-registered memory answers "
                            "(%d, %p)\n",
                    (int)ea, a.devicePointer, (int)eb, b.devicePointer);
            _exit(1);
        }
        _exit(hipHostRegister(p, OWN, 0) == hipSuccess && hipHostUnregister(p) == hipSuccess ? 0 : 1);
    }
    legacy_wait_child(c, "pending");
    free(p);
    free(never);
}

static void *child_thread(void *arg)
{
    long id = (long)arg;
    for (int i = 0; i < 50; i++) {
        void *q = id == 0 ? live : malloc(OWN);
        if (!q)
            return (void *)1;
        hipError_t e = hipHostRegister(q, OWN, 0);
        hipPointerAttribute_t a;
        (void)hipPointerGetAttributes(&a, q);
        if (e == hipSuccess)
            (void)hipHostUnregister(q);
        if (q != live)
            free(q);
    }
    return NULL;
}

static void threads(void)
{
    fflush(NULL);
    pid_t c = fork();
    if (c == 0) {
        pthread_t t[4];
        for (long i = 0; i < 4; i++)
            if (pthread_create(&t[i], NULL, child_thread, (void *)i) != 0)
                _exit(3);
        void *r;
        int bad = 0;
        for (int i = 0; i < 4; i++) {
            pthread_join(t[i], &r);
            bad |= r != NULL;
        }
        exit(bad);
    }
    legacy_wait_child(c, "threads");
}

static int exec_child(void)
{
    void *q = aligned_alloc(4096, OWN);
    if (!q || hipHostRegister(q, OWN, 0) != hipSuccess || hipHostUnregister(q) != hipSuccess)
        return 1;
    free(q);
    return 0;
}

static void exec_it(void)
{
    fflush(NULL);
    pid_t c = fork();
    if (c == 0) {
        execl("/proc/self/exe", "fork_inherit", "exec", (char *)NULL);
        _exit(127);
    }
    legacy_wait_child(c, "exec");
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "exec") == 0)
        return exec_child();
    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    live = aligned_alloc(4096, OWN);
    if (!live)
        return 2;
    CHECK(hipHostRegister(live, OWN, 0));
    for (int round = 0; round < 3; round++) {
        pending(s);
    }
    threads();
    exec_it();
    CHECK(hipStreamSynchronize(s));
    CHECK(hipHostUnregister(live));
    free(live);
    CHECK(hipStreamDestroy(s));
    return legacy_finish();
}
