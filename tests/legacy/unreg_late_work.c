/*
 * unreg_late_work - hipHostUnregister while a kernel still uses the range,
 * and another thread, once the call has begun, enqueues a host function
 * that waits for the unregister to return.
 *
 * The runtime's unregister waits for the device work enqueued before it
 * (the blocking stream's kernel), not for work enqueued while it waits: the
 * host function sees the call return and the program goes on. A release
 * that made the runtime's unregister later than the program's call would
 * wait for that host function too, which waits for the call: a deadlock
 * (here bounded: the host function gives up after 3 s and says so).
 *
 * Three rounds: the host function's stream stays; it is destroyed right
 * after the host function is enqueued; and, before the program lets the
 * host function finish, it forks, drops the pages (madvise) and maps over
 * the memory (MAP_FIXED): none of these waits for the host function
 * either, bare, since the registration is gone.
 */
#include "legacy.h"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "late_work.h"

#define N (256 * 1024) /* 1 MiB of ints */

enum round { PLAIN, DESTROYED, THEN_FORK_MADVISE_FIXED };
static enum round cur;
static hipStream_t late;

/* Waits up to 3 s for the unregister to return (the round to end). */
static void wait_return(hipStream_t st, hipError_t e, void *arg)
{
    (void)st;
    (void)e;
    (void)arg;
    late_wait_return();
}

static void *enqueue_late(void *arg)
{
    (void)arg;
    late_wait_for_the_call();
    CHECK(hipStreamAddCallback(late, wait_return, NULL, 0));
    if (cur == DESTROYED)
        CHECK(hipStreamDestroy(late)); /* its host function still runs */
    else
        CHECK(hipStreamSynchronize(late));
    return NULL;
}

static void round_of(enum round r, hipStream_t work)
{
    static const char *name[] = {"plain", "destroyed", "then fork, madvise, MAP_FIXED"};
    size_t bytes = N * sizeof(int);
    int *buf = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buf == MAP_FAILED)
        exit(2);
    legacy_fill(buf, N, 0, 5 + (int)r);
    cur = r;
    late_began = late_returned = late_gave_up = 0;
    CHECK(hipStreamCreateWithFlags(&late, hipStreamNonBlocking));
    CHECK(hipHostRegister(buf, bytes, hipHostRegisterMapped));
    int *dbuf;
    CHECK(hipHostGetDevicePointer((void **)&dbuf, buf, 0));

    static struct kargs args;
    args = (struct kargs){ .dev = dbuf, .n = N, .add = 3, .work_us = 400000 };
    CHECK(simhipLaunchKernel(work, add_kernel, &args));

    pthread_t t;
    if (pthread_create(&t, NULL, enqueue_late, NULL) != 0)
        exit(2);
    __atomic_store_n(&late_began, 1, __ATOMIC_RELEASE);
    CHECK(hipHostUnregister(buf));
    legacy_verify(name[r], buf, N, 0, 5 + (int)r, 3);
    if (r == THEN_FORK_MADVISE_FIXED) {
        /* Wait for the host function to be enqueued, then go on without it. */
        usleep(150000);
        pid_t pid = fork();
        if (pid == 0)
            _exit(7);
        int st = 0;
        if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 7) {
            printf("%s: the forked child did not exit 7\n", name[r]);
            ++*legacy_failures();
        }
        if (madvise(buf, bytes, MADV_DONTNEED) != 0 ||
            mmap(buf, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
                 0) != buf) {
            printf("%s: madvise or MAP_FIXED failed\n", name[r]);
            ++*legacy_failures();
        }
    }
    __atomic_store_n(&late_returned, 1, __ATOMIC_RELEASE);
    pthread_join(t, NULL);
    CHECK(hipDeviceSynchronize());
    if (__atomic_load_n(&late_gave_up, __ATOMIC_ACQUIRE)) {
        printf("%s: the host function enqueued after the unregister began waited 3 s for the "
               "program to go on\n", name[r]);
        ++*legacy_failures();
    }
    if (r != DESTROYED)
        CHECK(hipStreamDestroy(late));
    munmap(buf, bytes);
}

int main(void)
{
    hipStream_t work;
    CHECK(hipStreamCreate(&work)); /* blocking: every runtime's unregister waits for it */
    round_of(PLAIN, work);
    round_of(DESTROYED, work);
    round_of(THEN_FORK_MADVISE_FIXED, work);
    CHECK(hipStreamDestroy(work));
    return legacy_finish();
}
