/*
 * fork_ways.c - every way a driver-API program forks, after an unregister.
 *
 * Each round registers a 4 MiB buffer, has the device read it, unregisters
 * it and forks; the child asks the driver about the buffer. Bare, the
 * unregister completed before the fork, so the driver's copy in the child
 * knows it as unregistered (cuMemHostGetFlags refuses it). The ways:
 *   daemon   daemon(1, 1) (glibc forks inside, not through fork());
 *   atfork   the program's pthread_atfork prepare handler unregisters the
 *            buffer (a library giving back its staging buffer before a
 *            fork) and its parent handler registers it again;
 *   _Fork    glibc's _Fork(), which runs no fork handler;
 *   raw      a fork system call made with syscall(): its child maps
 *            MAP_FIXED over 64 KiB still registered and registers memory of
 *            its own (what it sees of the buffer is not checked: no handler
 *            of anyone's ran).
 * A child that does not finish within 10 s is a hang. Every child must
 * exit 0.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "legacy_cuda.h"

#define LEN (4ul << 20)
#define KEPT (64ul << 10)

pid_t _Fork(void);

static int failures;
static char *staging; /* the atfork round's buffer */

static void timed_wait(pid_t c, const char *how)
{
    if (c < 0) {
        fprintf(stderr, "%s: fork failed\n", how);
        failures++;
        return;
    }
    for (int i = 0; i < 1000; i++) {
        int st = 0;
        if (waitpid(c, &st, WNOHANG) == c) {
            if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                fprintf(stderr, "%s: child failed (status 0x%x)\n", how, st);
                failures++;
            }
            return;
        }
        usleep(10 * 1000);
    }
    kill(c, SIGKILL);
    waitpid(c, NULL, 0);
    fprintf(stderr, "%s: the child hung\n", how);
    failures++;
}

static void nop_kernel(void *arg) { (void)arg; }

/* A buffer the device used, then unregistered. */
static char *used_then_unregistered(CUstream s)
{
    char *b = aligned_alloc(4096, LEN);
    if (!b)
        exit(2);
    memset(b, 1, LEN);
    CHECK(cuMemHostRegister_v2(b, LEN, 0));
    CHECK(simcudaLaunchKernel(s, nop_kernel, NULL));
    CHECK(cuStreamSynchronize(s));
    CHECK(cuMemHostUnregister(b));
    return b;
}

static int registered(void *p)
{
    unsigned f = 0;
    return cuMemHostGetFlags(&f, p) == CUDA_SUCCESS;
}

static void daemon_round(void)
{
    int fds[2];
    if (pipe(fds) != 0)
        exit(2);
    fflush(NULL);
    pid_t c = fork(); /* the process that becomes the daemon: the driver is new there */
    if (c == 0) {
        close(fds[0]);
        lc_init();
        CUstream s;
        CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
        char *b = used_then_unregistered(s);
        if (daemon(1, 1) != 0)
            _exit(4);
        char verdict = registered(b) ? 'R' : 'u';
        (void)!write(fds[1], &verdict, 1);
        _exit(0);
    }
    close(fds[1]);
    timed_wait(c, "daemon"); /* daemon()'s parent exits at once */
    char verdict = 0;
    if (read(fds[0], &verdict, 1) != 1) {
        fprintf(stderr, "daemon: no answer from the daemon\n");
        failures++;
    } else if (verdict != 'u') {
        fprintf(stderr, "daemon: the daemon sees the buffer still registered\n");
        failures++;
    }
    close(fds[0]);
}

static void prepare_unregister(void)
{
    if (staging && cuMemHostUnregister(staging) != CUDA_SUCCESS)
        fprintf(stderr, "atfork prepare: unregister failed\n");
}

static void parent_register(void)
{
    if (staging && cuMemHostRegister_v2(staging, LEN, 0) != CUDA_SUCCESS)
        fprintf(stderr, "atfork parent: register failed\n");
}

static void atfork_rounds(CUstream s)
{
    staging = aligned_alloc(4096, LEN);
    if (!staging)
        exit(2);
    memset(staging, 1, LEN);
    CHECK(cuMemHostRegister_v2(staging, LEN, 0));
    pthread_atfork(prepare_unregister, parent_register, NULL);
    for (int round = 0; round < 3; round++) {
        CHECK(simcudaLaunchKernel(s, nop_kernel, NULL));
        CHECK(cuStreamSynchronize(s));
        fflush(NULL);
        pid_t c = fork();
        if (c == 0)
            _exit(registered(staging) ? 1 : 0);
        timed_wait(c, "atfork (the child sees the staging buffer registered: 1)");
    }
    char *b = staging;
    staging = NULL; /* the handlers stay registered: they do nothing now */
    CHECK(cuMemHostUnregister(b));
    free(b);
}

static void fork_round(CUstream s, int raw)
{
    char *b = used_then_unregistered(s);
    char *kept = mmap(NULL, KEPT, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (kept == MAP_FAILED)
        exit(2);
    memset(kept, 1, KEPT);
    CHECK(cuMemHostRegister_v2(kept, KEPT, 0));
    fflush(NULL);
    pid_t c = raw ? (pid_t)syscall(SYS_fork) : _Fork();
    if (c == 0) {
        if (!raw && registered(b))
            _exit(5);
        char *q = mmap(kept, KEPT, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                       -1, 0);
        if (q != kept)
            _exit(3);
        memset(q, 7, KEPT);
        char *own = aligned_alloc(4096, KEPT);
        if (!own || cuMemHostRegister_v2(own, KEPT, 0) != CUDA_SUCCESS ||
            cuMemHostUnregister(own) != CUDA_SUCCESS)
            _exit(4);
        free(own);
        _exit(0);
    }
    timed_wait(c, raw ? "syscall(SYS_fork)" : "_Fork (status 5: the child sees the buffer registered)");
    CHECK(cuMemHostUnregister(kept));
    munmap(kept, KEPT);
    free(b);
}

int main(void)
{
    daemon_round(); /* first: its child initializes the driver itself */
    lc_init();
    CUstream s;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    fork_round(s, 0);
    fork_round(s, 1);
    atfork_rounds(s);
    CHECK(cuStreamDestroy(s));
    if (failures) {
        fprintf(stderr, "FAILED: %d\n", failures);
        return 1;
    }
    printf("OK\n");
    return 0;
}
