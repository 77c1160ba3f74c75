/*
 * fork_after_close.c - a program that loads the HIP runtime as a plugin
 * (dlopen RTLD_LOCAL, dlsym), unregisters a buffer while device work is
 * still running on another stream, closes the runtime and forks at once;
 * the child loads the runtime again and uses it, then the parent does.
 * ROUNDS rounds, each with a fresh load. Prints OK when every use in the
 * parent and in every child got the device's bytes.
 *
 * Without safepin the runtime is unloaded at the dlclose, before the fork.
 * With safepin it stays loaded while the release is pending, and the
 * reaper unloads it once that release is done: that unload must never
 * run across the program's fork (a child left the loader's state
 * half-changed) nor under a prepare handler of the library it unloads
 * (the handler's code gone before glibc calls it).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <hip/hip_runtime_api.h>

#define LIB "libamdhip64.so.5"
#define N (16 * 1024)
#define ROUNDS 8

struct rt {
    void *h;
    hipError_t (*reg)(void *, size_t, unsigned);
    hipError_t (*unreg)(void *);
    hipError_t (*screate)(hipStream_t *, unsigned);
    hipError_t (*ssync)(hipStream_t);
    hipError_t (*launch)(hipStream_t, void (*)(void *), void *);
    void (*dwrite)(void *, const void *, size_t);
};

static int load(struct rt *rt)
{
    memset(rt, 0, sizeof *rt);
    rt->h = dlopen(LIB, RTLD_NOW | RTLD_LOCAL);
    if (!rt->h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return -1;
    }
    *(void **)&rt->reg = dlsym(rt->h, "hipHostRegister");
    *(void **)&rt->unreg = dlsym(rt->h, "hipHostUnregister");
    *(void **)&rt->screate = dlsym(rt->h, "hipStreamCreateWithFlags");
    *(void **)&rt->ssync = dlsym(rt->h, "hipStreamSynchronize");
    *(void **)&rt->launch = dlsym(rt->h, "simhip_launch_kernel");
    *(void **)&rt->dwrite = dlsym(rt->h, "simhip_device_write");
    return rt->reg && rt->unreg && rt->screate && rt->ssync && rt->launch && rt->dwrite ? 0 : -1;
}

struct job {
    struct rt *rt;
    int *dst;
    int seed;
    unsigned us;
};

static void fill(void *arg)
{
    struct job *j = arg;
    for (int i = 0; i < N; i++) {
        int v = i * 7 + j->seed;
        j->rt->dwrite(j->dst + i, &v, sizeof v);
    }
}

static void busy(void *arg) { usleep(((struct job *)arg)->us); }

/* Load, register buf, let the device fill it, unregister with work still
 * running on another stream (busy_us), check; closes the runtime. */
static int use(const char *who, int *buf, int seed, unsigned busy_us)
{
    struct rt rt;
    hipStream_t s1, s2;
    if (load(&rt) || rt.screate(&s1, hipStreamNonBlocking) || rt.screate(&s2, hipStreamNonBlocking) ||
        rt.reg(buf, N * sizeof(int), 0)) {
        fprintf(stderr, "%s: load or register failed\n", who);
        return 1;
    }
    struct job j = {&rt, buf, seed, 0}, b = {&rt, NULL, 0, busy_us};
    if (rt.launch(s1, fill, &j) || rt.ssync(s1) || (busy_us && rt.launch(s2, busy, &b)) || rt.unreg(buf)) {
        fprintf(stderr, "%s: device work or unregister failed\n", who);
        return 1;
    }
    for (int i = 0; i < N; i++)
        if (buf[i] != i * 7 + seed) {
            fprintf(stderr, "%s: wrong bytes at %d\n", who, i);
            return 1;
        }
    dlclose(rt.h);
    return 0;
}

int main(void)
{
    int *buf = aligned_alloc(4096, N * sizeof(int));
    if (!buf)
        return 2;
    for (int r = 0; r < ROUNDS; r++) {
        if (use("first", buf, 3 * r, 50000))
            return 1;
        fflush(stdout);
        pid_t pid = fork(); /* right after the dlclose, a release pending */
        if (pid < 0)
            return 2;
        if (pid == 0) {
            usleep(100000);
            _exit(use("child", buf, 3 * r + 1, 0));
        }
        int st = 0;
        if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "round %d: child %s %d\n", r, WIFEXITED(st) ? "exit" : "signal",
                    WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
            return 1;
        }
        if (use("parent", buf, 3 * r + 2, 0))
            return 1;
    }
    free(buf);
    printf("OK\n");
    return 0;
}
