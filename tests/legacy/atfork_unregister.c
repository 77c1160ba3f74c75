/*
 * atfork_unregister - the program's own pthread_atfork prepare handler
 * unregisters registered memory.
 *
 * A library that pins a staging buffer gives it back before every fork, so
 * that the child does not inherit the pinned pages: its prepare handler
 * unregisters the buffer (4 MiB, used by the device first), and its parent
 * handler registers it again. The child asks the runtime about it: bare,
 * it was unregistered before the fork, so the runtime's copy in the child
 * knows it as unregistered. Three forks.
 */
#include <pthread.h>
#include <sys/wait.h>
#include "legacy_fork.h"

#define LEN (4ul << 20)

static char *staging;

static void prepare_unregister(void)
{
    if (staging && hipHostUnregister(staging) != hipSuccess)
        fprintf(stderr, "prepare: unregister failed\n");
}

static void parent_register(void)
{
    if (staging && hipHostRegister(staging, LEN, 0) != hipSuccess)
        fprintf(stderr, "parent: register failed\n");
}

int main(void)
{
    staging = aligned_alloc(4096, LEN);
    if (!staging)
        return 2;
    memset(staging, 1, LEN);
    CHECK(hipHostRegister(staging, LEN, 0));
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    pthread_atfork(prepare_unregister, parent_register, NULL);
    for (int round = 0; round < 3; round++) {
        CHECK(hipMemcpyAsync(staging, staging + LEN / 2, LEN / 2, hipMemcpyHostToHost, s));
        CHECK(hipStreamSynchronize(s));
        fflush(NULL);
        pid_t c = fork();
        if (c < 0)
            return 2;
        if (c == 0) {
            unsigned f = 0;
            int bad = 0;
            if (hipHostGetFlags(&f, staging) == hipSuccess) {
                fprintf(stderr, "child: the staging buffer is still registered\n");
                bad = 1;
            }
            _exit(bad);
        }
        legacy_wait_child(c, "fork");
    }
    CHECK(hipHostUnregister(staging));
    free(staging);
    CHECK(hipStreamDestroy(s));
    return legacy_finish();
}
