/*
 * loader_locks.c - programs whose threads meet safepin's hooks inside the
 * loader: a library's constructor runs with the loader's lock held, and a
 * fork's prepare handlers run before the child exists. Bare, each mode
 * ends with OK; safepin's own lock must never be held while it waits for
 * the loader's, nor the loader's be needed where the program's threads
 * never need it, and a prepare handler must run wherever its code lies.
 *
 *   jit        a pthread_atfork prepare handler whose code lies in an
 *              anonymous executable mapping (a JIT's, a ctypes callback's):
 *              it runs at each of 3 forks (x86-64; elsewhere: OK).
 *   fork_ctor  the HIP runtime started (its prepare handler registered);
 *              thread B dlopen()s a plugin whose constructor waits for a
 *              lock of the program's, which thread A holds across a fork.
 *   dlsym_ctor thread A loads the runtime, looks up hooked names, closes
 *              it; thread B loads a plugin whose constructor loads the
 *              runtime and looks up hipFree; ROUNDS rounds each.
 *   ns_churn   the runtime in a namespace of its own (dlmopen), opened
 *              and closed again each round (never unloaded: the first
 *              handle stays open) while another thread loads and unloads
 *              an unrelated library; each round registers and unregisters
 *              through the first handle's functions.
 *   small_stack a coroutine on a 7680-byte stack (makecontext) loads the
 *              runtime, registers, unregisters while another stream is
 *              busy (the release pending) and closes the runtime. Bare it
 *              needs about 6.9 KiB there (x86-64, glibc 2.36; elsewhere:
 *              OK).
 * Arguments: MODE PLUGIN (the path of libctor_plugin.so) [ROUNDS of
 * dlsym_ctor, 10000].
 */
#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>
#include <hip/hip_runtime_api.h>

#define LIB "libamdhip64.so.5"

static const char *mode, *plugin;
static pthread_mutex_t app_lock = PTHREAD_MUTEX_INITIALIZER;
static sem_t in_ctor;
static void *plugin_hip_free;

/* The plugin's constructor: the loader's lock is held here. */
void loader_locks_ctor(void)
{
    if (strcmp(mode, "fork_ctor") == 0) {
        sem_post(&in_ctor);
        pthread_mutex_lock(&app_lock);
        pthread_mutex_unlock(&app_lock);
    } else if (strcmp(mode, "dlsym_ctor") == 0) {
        void *h = dlopen(LIB, RTLD_NOW | RTLD_LOCAL);
        plugin_hip_free = h ? dlsym(h, "hipFree") : NULL;
        if (h)
            dlclose(h);
    }
}

static int fork_and_wait(void)
{
    pid_t p = fork();
    if (p == 0)
        _exit(0);
    int st;
    return p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}

static volatile int prepared;
static void prepare(void) { prepared++; }

static int jit(void)
{
#if defined(__x86_64__)
    unsigned char *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (code == MAP_FAILED)
        return 2;
    uint64_t target = (uint64_t)(uintptr_t)prepare; /* movabs rax, target; jmp rax */
    code[0] = 0x48;
    code[1] = 0xb8;
    memcpy(code + 2, &target, 8);
    code[10] = 0xff;
    code[11] = 0xe0;
    if (mprotect(code, 4096, PROT_READ | PROT_EXEC))
        return 2;
    pthread_atfork((void (*)(void))(uintptr_t)code, NULL, NULL);
    for (int i = 0; i < 3; i++)
        if (fork_and_wait())
            return 1;
    if (prepared != 3) {
        printf("the prepare handler ran %d times of 3\n", prepared);
        return 1;
    }
#endif
    return 0;
}

static void *load_plugin(void *arg)
{
    (void)arg;
    return dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
}

static int fork_ctor(void)
{
    void *h = dlopen(LIB, RTLD_NOW | RTLD_LOCAL);
    hipError_t (*count)(int *) = h ? (hipError_t(*)(int *))dlsym(h, "hipGetDeviceCount") : NULL;
    int n;
    if (!count || count(&n) != hipSuccess)
        return 2;
    sem_init(&in_ctor, 0, 0);
    pthread_mutex_lock(&app_lock);
    pthread_t t;
    pthread_create(&t, NULL, load_plugin, NULL);
    sem_wait(&in_ctor); /* B holds the loader's lock, in the constructor */
    usleep(10000);
    int bad = fork_and_wait();
    pthread_mutex_unlock(&app_lock);
    void *p;
    pthread_join(t, &p);
    if (!p)
        return 1;
    dlclose(p);
    dlclose(h);
    return bad;
}

static int rounds = 10000;

static void *lookups(void *arg)
{
    (void)arg;
    for (int i = 0; i < rounds; i++) {
        void *h = dlopen(LIB, RTLD_NOW | RTLD_LOCAL);
        if (!h || !dlsym(h, "hipHostRegister") || !dlsym(h, "hipStreamCreate"))
            return (void *)1;
        dlclose(h);
    }
    return NULL;
}

static int dlsym_ctor(void)
{
    pthread_t a;
    pthread_create(&a, NULL, lookups, NULL);
    int bad = 0;
    for (int i = 0; i < rounds && !bad; i++) {
        void *p = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
        bad = !p || !plugin_hip_free;
        if (p)
            dlclose(p);
    }
    void *r;
    pthread_join(a, &r);
    return bad || r;
}

static volatile int churning = 1;

static void *churn(void *arg)
{
    (void)arg;
    while (churning) {
        void *h = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
        if (h)
            dlclose(h);
    }
    return NULL;
}

static int ns_churn(void)
{
    void *h0 = dlmopen(LM_ID_NEWLM, LIB, RTLD_NOW | RTLD_LOCAL);
    Lmid_t ns;
    if (!h0 || dlinfo(h0, RTLD_DI_LMID, &ns))
        return 2;
    hipError_t (*reg)(void *, size_t, unsigned) = (hipError_t(*)(void *, size_t, unsigned))dlsym(h0, "hipHostRegister");
    hipError_t (*unreg)(void *) = (hipError_t(*)(void *))dlsym(h0, "hipHostUnregister");
    int *b = aligned_alloc(4096, 4096);
    if (!reg || !unreg || !b)
        return 2;
    pthread_t c;
    pthread_create(&c, NULL, churn, NULL);
    int bad = 0;
    for (int r = 0; r < 1000 && !bad; r++) {
        void *h = dlmopen(ns, LIB, RTLD_NOW | RTLD_LOCAL);
        if (!h)
            bad = 1;
        else
            dlclose(h);
        hipError_t e = reg(b, 4096, 0);
        if (e == hipSuccess)
            e = unreg(b);
        if (e != hipSuccess) {
            printf("round %d: %d\n", r, (int)e);
            bad = 1;
        }
    }
    churning = 0;
    pthread_join(c, NULL);
    free(b);
    dlclose(h0);
    return bad;
}

static char stack_buf[1 << 16] __attribute__((aligned(4096)));
static ucontext_t main_uc, co_uc;
static int co_result = -1;

static void busy(void *a)
{
    (void)a;
    usleep(20000);
}

static void co_body(void)
{
    co_result = 1;
    void *h = dlopen(LIB, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return;
    hipError_t (*reg)(void *, size_t, unsigned) = (hipError_t(*)(void *, size_t, unsigned))dlsym(h, "hipHostRegister");
    hipError_t (*unreg)(void *) = (hipError_t(*)(void *))dlsym(h, "hipHostUnregister");
    hipError_t (*sc)(hipStream_t *, unsigned) = (hipError_t(*)(hipStream_t *, unsigned))dlsym(h, "hipStreamCreateWithFlags");
    hipError_t (*launch)(hipStream_t, void (*)(void *), void *) =
        (hipError_t(*)(hipStream_t, void (*)(void *), void *))dlsym(h, "simhip_launch_kernel");
    hipStream_t st;
    co_result = 2;
    if (!reg || !unreg || !sc || !launch || sc(&st, hipStreamNonBlocking) ||
        reg(stack_buf, sizeof stack_buf, 0) || launch(st, busy, NULL) || unreg(stack_buf))
        return;
    co_result = dlclose(h) ? 3 : 0;
}

static int small_stack(void)
{
#if defined(__x86_64__)
    size_t sz = 7680;
    char *stk = mmap(NULL, sz + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (stk == MAP_FAILED || mprotect(stk, 4096, PROT_NONE)) /* a guard page below */
        return 2;
    getcontext(&co_uc);
    co_uc.uc_stack.ss_sp = stk + 4096;
    co_uc.uc_stack.ss_size = sz;
    co_uc.uc_link = &main_uc;
    makecontext(&co_uc, co_body, 0);
    swapcontext(&main_uc, &co_uc);
    if (co_result) {
        printf("failed at step %d\n", co_result);
        return 1;
    }
#endif
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    mode = argv[1];
    plugin = argv[2];
    if (argc > 3)
        rounds = atoi(argv[3]);
    int rc = strcmp(mode, "jit") == 0          ? jit()
             : strcmp(mode, "fork_ctor") == 0  ? fork_ctor()
             : strcmp(mode, "dlsym_ctor") == 0 ? dlsym_ctor()
             : strcmp(mode, "ns_churn") == 0   ? ns_churn()
             : strcmp(mode, "small_stack") == 0 ? small_stack()
                                               : 2;
    if (rc == 0)
        printf("OK\n");
    return rc;
}
