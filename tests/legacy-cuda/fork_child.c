/*
 * fork_child.c - forked children of a program that registers memory:
 * what they inherit, and that the fork itself never hangs.
 *   reregister  the parent unregisters a buffer while the device is busy
 *               with other work and forks at once; the child registers
 *               that buffer: bare, the driver says 0 (the unregister had
 *               completed when it returned);
 *   freed       the parent frees a registered 1 MiB block likewise and
 *               forks: the child can map its own memory there;
 *   threads     the child runs four threads of its own registrations, one
 *               of them on memory the parent still has registered (the
 *               driver answers as it will);
 *   exec        the child execs a program that registers memory;
 *   forks       200 forks while another thread keeps registering,
 *               unregistering and launching: no child may hang (10 s each).
 * Every child must exit 0.
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

#include "legacy_cuda.h"

#define OWN (64u << 10)
#define BLOCK (1u << 20)

static void *live; /* registered by the parent throughout */
static int failures;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* 0 once the child exited 0; it is killed after 10 s. */
static int wait_child(pid_t c, const char *what)
{
    int st = 0;
    pid_t got = 0;
    double until = now_s() + 10;
    if (c < 0) {
        fprintf(stderr, "%s: fork failed: %s\n", what, strerror(errno));
        failures++;
        return 1;
    }
    while ((got = waitpid(c, &st, WNOHANG)) == 0 && now_s() < until)
        usleep(1000);
    if (got == 0) {
        kill(c, SIGKILL);
        waitpid(c, &st, 0);
        fprintf(stderr, "%s: the child hangs (10 s); killed\n", what);
        failures++;
        return 1;
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "%s: child failed (status 0x%x%s)\n", what, st,
                WIFSIGNALED(st) ? ", killed by a signal" : "");
        failures++;
        return 1;
    }
    return 0;
}

static void slow_kernel(void *arg)
{
    (void)arg;
    usleep(100 * 1000);
}

static void reregister(CUstream s)
{
    void *p = aligned_alloc(4096, OWN);
    if (!p)
        exit(2);
    CHECK(cuMemHostRegister_v2(p, OWN, 0));
    CHECK(simcudaLaunchKernel(s, slow_kernel, NULL));
    CHECK(cuMemHostUnregister(p));
    fflush(NULL);
    pid_t c = fork();
    if (c == 0) {
        CUresult e = cuMemHostRegister_v2(p, OWN, 0);
        if (e != CUDA_SUCCESS) {
            fprintf(stderr, "reregister: the child's register of the memory its parent "
                            "unregistered returned %s (%d)\n", lc_name(e), (int)e);
            _exit(1);
        }
        _exit(cuMemHostUnregister(p) == CUDA_SUCCESS ? 0 : 1);
    }
    wait_child(c, "reregister");
    free(p);
}

static void freed(CUstream s)
{
    char *b = malloc(BLOCK);
    if (!b)
        exit(2);
    volatile uintptr_t page_at = ((uintptr_t)b + 4095) & ~(uintptr_t)4095;
    memset(b, 1, BLOCK);
    CHECK(cuMemHostRegister_v2(b, BLOCK, 0));
    CHECK(simcudaLaunchKernel(s, slow_kernel, NULL));
    CHECK(cuMemHostUnregister(b));
    free(b);
    fflush(NULL);
    pid_t c = fork();
    if (c == 0) {
        void *page = (void *)page_at;
        void *q = mmap(page, 4096, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        if (q != page) {
            fprintf(stderr, "freed: the child cannot map memory where the parent freed its block: "
                            "%s\n", q == MAP_FAILED ? strerror(errno) : "placed elsewhere");
            _exit(1);
        }
        _exit(0);
    }
    wait_child(c, "freed");
}

static void *child_thread(void *arg)
{
    long id = (long)arg;
    for (int i = 0; i < 50; i++) {
        void *q = id == 0 ? live : malloc(OWN);
        if (!q)
            return (void *)1;
        CUresult e = cuMemHostRegister_v2(q, OWN, 0);
        unsigned flags;
        (void)cuMemHostGetFlags(&flags, q);
        if (e == CUDA_SUCCESS)
            (void)cuMemHostUnregister(q);
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
    wait_child(c, "threads");
}

static int exec_child(void)
{
    lc_init();
    void *q = aligned_alloc(4096, OWN);
    if (!q || cuMemHostRegister_v2(q, OWN, 0) != CUDA_SUCCESS ||
        cuMemHostUnregister(q) != CUDA_SUCCESS)
        return 1;
    free(q);
    return 0;
}

static void exec_it(void)
{
    fflush(NULL);
    pid_t c = fork();
    if (c == 0) {
        execl("/proc/self/exe", "fork_child", "exec", (char *)NULL);
        _exit(127);
    }
    wait_child(c, "exec");
}

static int stop; /* atomic */
static CUcontext ctx;

static void short_kernel(void *arg)
{
    (void)arg;
    usleep(200);
}

/* Registrations, unregistrations and device work on another thread; its
 * buffers and the driver's records of its work share an allocator arena. */
static void *churn(void *arg)
{
    (void)arg;
    CUstream s;
    if (cuCtxSetCurrent(ctx) != CUDA_SUCCESS ||
        cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
        return NULL;
    void *keep = malloc(OWN), *q = malloc(OWN);
    if (!keep || !q || cuMemHostRegister_v2(keep, OWN, 0) != CUDA_SUCCESS)
        return NULL;
    while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
        (void)simcudaLaunchKernel(s, short_kernel, NULL);
        if (cuMemHostRegister_v2(q, OWN, 0) == CUDA_SUCCESS)
            (void)cuMemHostUnregister(q);
        free(malloc(1 + (size_t)rand() % 4000));
    }
    (void)cuStreamSynchronize(s);
    (void)cuMemHostUnregister(keep);
    (void)cuStreamDestroy_v2(s);
    free(q);
    free(keep);
    return NULL;
}

static void forks(void)
{
    pthread_t t;
    __atomic_store_n(&stop, 0, __ATOMIC_RELAXED);
    if (pthread_create(&t, NULL, churn, NULL) != 0)
        exit(2);
    for (int i = 0; i < 200; i++) {
        fflush(NULL);
        pid_t c = fork();
        if (c == 0)
            _exit(0);
        char what[32];
        snprintf(what, sizeof(what), "fork %d", i);
        if (wait_child(c, what))
            break;
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    pthread_join(t, NULL);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "exec") == 0)
        return exec_child();
    /* A fixed threshold: every 1 MiB block is a mapping of its own. */
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    ctx = lc_init();
    CUstream s;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    live = aligned_alloc(4096, OWN);
    if (!live)
        return 2;
    CHECK(cuMemHostRegister_v2(live, OWN, 0));
    for (int round = 0; round < 3; round++) {
        reregister(s);
        freed(s);
    }
    threads();
    exec_it();
    forks();
    CHECK(cuStreamSynchronize(s));
    CHECK(cuMemHostUnregister(live));
    free(live);
    CHECK(cuStreamDestroy_v2(s));
    if (failures) {
        fprintf(stderr, "FAILED: %d check(s) failed\n", failures);
        return 1;
    }
    printf("OK\n");
    return 0;
}
