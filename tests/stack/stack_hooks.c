/*
 * stack_hooks - how much of the calling thread's stack each hooked call
 * uses, and whether each works from a PTHREAD_STACK_MIN thread.
 *
 * The main thread registers memory (and, for the calls that need it,
 * unregisters or frees it first); another thread makes the one call under
 * test. Built twice: for HIP (simhip, or any libamdhip64) and, with
 * -DSTACK_CUDA, for the CUDA driver API (simcuda).
 *
 *   stack_hooks measure   each call on a thread whose stack (1 MiB, ours)
 *                         is filled with a pattern below the stack pointer
 *                         just before the call: the deepest byte changed is
 *                         the call's high-water mark. One round unmeasured
 *                         (first calls bind symbols, start helpers), then
 *                         ROUNDS measured; prints "depth NAME BYTES" (the
 *                         most of them).
 *   stack_hooks first     each call measured once, with no round before
 *                         it: run with STACK_ONLY=name, one call per
 *                         process, this is the first call of that hook in
 *                         the process (symbol binding, first-use setup).
 *   stack_hooks small     each call on a thread created with a stack of
 *                         PTHREAD_STACK_MIN bytes; prints "done NAME".
 *
 * measure and first also print "usable BYTES": how much stack a thread
 * created with PTHREAD_STACK_MIN has below its start routine's frame.
 * Static thread-local storage is carved out of every thread's stack, so a
 * preloaded library's TLS shows here as less usable stack.
 *
 * Prints "OK" at the end; a crash (a stack overflow is a SIGSEGV) ends it
 * before. STACK_ONLY=name,name runs only those calls.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifdef STACK_CUDA
#include "simcuda.h"
typedef CUresult rt_err;
#define RT_OK CUDA_SUCCESS
static CUdeviceptr dev_buf;
#else
#include <hip/hip_runtime_api.h>
typedef hipError_t rt_err;
#define RT_OK hipSuccess
static void *dev_buf;
#endif

#define LEN (64 * 1024)

static void die(const char *what, int e)
{
    fprintf(stderr, "stack_hooks: %s failed (%d)\n", what, e);
    exit(1);
}
#define MUST(call)                                                             \
    do {                                                                       \
        rt_err e_ = (call);                                                    \
        if (e_ != RT_OK)                                                       \
            die(#call, (int)e_);                                               \
    } while (0)

/* ---- the runtime's calls, one spelling for both faces ------------------- */

static rt_err do_register(void *p, size_t n)
{
#ifdef STACK_CUDA
    return cuMemHostRegister_v2(p, n, 0);
#else
    return hipHostRegister(p, n, hipHostRegisterDefault);
#endif
}

static rt_err do_unregister(void *p)
{
#ifdef STACK_CUDA
    return cuMemHostUnregister(p);
#else
    return hipHostUnregister(p);
#endif
}

static rt_err do_attributes(void *p)
{
#ifdef STACK_CUDA
    unsigned type = 0;
    return cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)p);
#else
    hipPointerAttribute_t a;
    return hipPointerGetAttributes(&a, p);
#endif
}

static rt_err do_copy(void *p)
{
#ifdef STACK_CUDA
    return cuMemcpyHtoD_v2(dev_buf, p, LEN);
#else
    return hipMemcpy(dev_buf, p, LEN, hipMemcpyHostToDevice);
#endif
}

static rt_err do_device_free(void *p)
{
#ifdef STACK_CUDA
    return cuMemFree_v2((CUdeviceptr)p);
#else
    return hipFree(p);
#endif
}

/* ---- the calls under test ------------------------------------------------ */

typedef struct op {
    const char *name;
    void (*setup)(void **p); /* main thread: what the call needs */
    void (*call)(void **p);  /* the measured thread: the call */
    void (*cleanup)(void *p);
} op;

static size_t cur_len; /* of the mapping under test: mremap makes it longer */

static void *map_len(void)
{
    cur_len = LEN;
    void *p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        die("mmap", errno);
    memset(p, 1, LEN);
    return p;
}

/* Bare, a block freed while registered leaves a stale registration on
 * CUDA (712 for the next register at its address): this program, freeing
 * registered memory on purpose, clears it first as a careful one would. */
static void register_fresh(void *p)
{
    if (do_register(p, LEN) == RT_OK)
        return;
    (void)do_unregister(p);
    MUST(do_register(p, LEN));
}

static void set_mapped(void **p) { *p = map_len(); }
static void set_registered(void **p)
{
    *p = map_len();
    register_fresh(*p);
}
static void set_unregistered(void **p)
{
    set_registered(p);
    MUST(do_unregister(*p));
}
static void set_heap_registered(void **p)
{
    *p = malloc(LEN);
    if (!*p)
        die("malloc", ENOMEM);
    memset(*p, 1, LEN);
    register_fresh(*p);
}

static void call_register(void **p) { (void)do_register(*p, LEN); }
static void call_unregister(void **p) { (void)do_unregister(*p); }
static void call_attributes(void **p) { (void)do_attributes(*p); }
static void call_copy(void **p) { (void)do_copy(*p); }
static void call_device_free_host(void **p) { (void)do_device_free(*p); }
static void call_free(void **p) { free(*p); *p = NULL; }
static void call_realloc(void **p)
{
    void *q = realloc(*p, 2 * LEN);
    if (q)
        *p = q;
}
static void call_munmap(void **p) { munmap(*p, LEN); *p = NULL; }
static void call_mremap(void **p)
{
    void *q = mremap(*p, LEN, 2 * LEN, MREMAP_MAYMOVE);
    if (q != MAP_FAILED)
        cur_len = 2 * LEN;
    *p = q == MAP_FAILED ? NULL : q;
}
static void call_madvise(void **p) { madvise(*p, LEN, MADV_DONTNEED); }
static void call_fixed_mmap(void **p)
{
    void *q = mmap(*p, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (q == MAP_FAILED)
        *p = NULL;
}

static void clean_unregister_unmap(void *p)
{
    if (!p)
        return;
    (void)do_unregister(p);
    munmap(p, cur_len);
}
static void clean_unmap(void *p)
{
    if (p)
        munmap(p, cur_len);
}
static void clean_free(void *p) { free(p); }
static void clean_none(void *p) { (void)p; }

/* The calls a program makes, and the misuse that makes safepin speak. A
 * double unregister or a device free of a host pointer can abort the bare
 * runtime (DESIGN section 3): STACK_MISUSE=1 adds them (under safepin). */
static const op ops[] = {
    {"register", set_mapped, call_register, clean_unregister_unmap},
    {"attributes", set_registered, call_attributes, clean_unregister_unmap},
    {"copy", set_registered, call_copy, clean_unregister_unmap},
    {"unregister", set_registered, call_unregister, clean_unmap},
    {"free", set_heap_registered, call_free, clean_none},
    {"realloc", set_heap_registered, call_realloc, clean_free},
    {"munmap", set_registered, call_munmap, clean_unmap},
    {"mremap", set_registered, call_mremap, clean_unmap},
    {"madvise", set_registered, call_madvise, clean_unregister_unmap},
    {"fixed-mmap", set_registered, call_fixed_mmap, clean_unregister_unmap},
    {"unregister-unknown", set_mapped, call_unregister, clean_unmap},
};
static const op misuse[] = {
    {"double-unregister", set_unregistered, call_unregister, clean_unmap},
    {"device-free-host", set_registered, call_device_free_host, clean_unregister_unmap},
};

/* ---- the thread that makes the call -------------------------------------- */

#define MEASURE_STACK (1u << 20)
#define PATTERN 0x5aa5c33cf00f9669ull
#define MARGIN 64 /* bytes below the stack pointer left unfilled */
#define ROUNDS 4  /* measured runs of each call (the most is kept) */

typedef struct job {
    const op *o;
    void *p;
    char *lo; /* the measured thread's stack, lowest byte (measure) */
    size_t depth;
} job;

static __attribute__((noinline)) uintptr_t stack_pointer(void)
{
    return (uintptr_t)__builtin_frame_address(0);
}

static __attribute__((noinline)) void fill(uint64_t *from, uint64_t *to)
{
    for (volatile uint64_t *w = from; w < to; w++)
        *w = PATTERN;
}

static void *measured(void *arg)
{
    job *j = arg;
    /* Our frame's address is above everything the calls below use. */
    uintptr_t sp = stack_pointer() - MARGIN;
    uint64_t *lo = (uint64_t *)(((uintptr_t)j->lo + 7) & ~(uintptr_t)7);
    uint64_t *hi = (uint64_t *)(sp & ~(uintptr_t)7);
    fill(lo, hi);
    j->o->call(&j->p);
    uint64_t *w = lo;
    while (w < hi && *w == PATTERN)
        w++;
    j->depth = (size_t)(sp + MARGIN - (uintptr_t)w);
    return NULL;
}

static void *plain(void *arg)
{
    job *j = arg;
    j->o->call(&j->p);
    return NULL;
}

static size_t run_one(const op *o, int small, char *stack)
{
    job j = {o, NULL, stack, 0};
    o->setup(&j.p);
    pthread_attr_t a;
    pthread_attr_init(&a);
    int e = small ? pthread_attr_setstacksize(&a, PTHREAD_STACK_MIN)
                  : pthread_attr_setstack(&a, stack, MEASURE_STACK);
    if (e)
        die("pthread_attr_setstack", e);
    pthread_t t;
    if ((e = pthread_create(&t, &a, small ? plain : measured, &j)) != 0)
        die("pthread_create", e);
    pthread_join(t, NULL);
    pthread_attr_destroy(&a);
    o->cleanup(j.p);
    return j.depth;
}

static int wanted(const char *name)
{
    const char *only = getenv("STACK_ONLY");
    if (!only || !*only)
        return 1;
    size_t n = strlen(name);
    for (const char *s = only; (s = strstr(s, name)); s += n)
        if ((s == only || s[-1] == ',') && (s[n] == ',' || s[n] == '\0'))
            return 1;
    return 0;
}

/* A PTHREAD_STACK_MIN thread's stack below its start routine's frame. */
static void *usable_thread(void *arg)
{
    pthread_attr_t a;
    void *lo;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &a) != 0 ||
        pthread_attr_getstack(&a, &lo, &size) != 0)
        die("pthread_getattr_np", errno);
    pthread_attr_destroy(&a);
    *(size_t *)arg = stack_pointer() - (uintptr_t)lo;
    return NULL;
}

static size_t usable_min_stack(void)
{
    size_t n = 0;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, PTHREAD_STACK_MIN);
    pthread_t t;
    int e = pthread_create(&t, &a, usable_thread, &n);
    if (e)
        die("pthread_create", e);
    pthread_join(t, NULL);
    pthread_attr_destroy(&a);
    return n;
}

static void run_list(const op *list, size_t n, int small, int first, char *stack)
{
    for (size_t i = 0; i < n; i++) {
        const op *o = &list[i];
        if (!wanted(o->name))
            continue;
        if (small) {
            run_one(o, 1, stack);
            printf("done %s\n", o->name);
        } else if (first) {
            printf("depth %s %zu\n", o->name, run_one(o, 0, stack));
        } else {
            run_one(o, 0, stack); /* first calls: symbols bound, helpers started */
            size_t most = 0;
            for (int r = 0; r < ROUNDS; r++) {
                size_t d = run_one(o, 0, stack);
                most = d > most ? d : most;
            }
            printf("depth %s %zu\n", o->name, most);
        }
        fflush(stdout);
    }
}

int main(int argc, char **argv)
{
    int small = argc > 1 && strcmp(argv[1], "small") == 0;
    int first = argc > 1 && strcmp(argv[1], "first") == 0;
    if (argc < 2 || (!small && !first && strcmp(argv[1], "measure") != 0)) {
        fprintf(stderr, "usage: stack_hooks measure|first|small\n");
        return 2;
    }
#ifdef STACK_CUDA
    CUdevice dev;
    CUcontext ctx;
    MUST(cuInit(0));
    MUST(cuDeviceGet(&dev, 0));
    MUST(cuDevicePrimaryCtxRetain(&ctx, dev));
    MUST(cuCtxSetCurrent(ctx));
    MUST(cuMemAlloc_v2(&dev_buf, LEN));
#else
    MUST(hipMalloc(&dev_buf, LEN));
#endif
    char *stack = mmap(NULL, MEASURE_STACK, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED)
        die("mmap", errno);
    if (!small)
        printf("usable %zu\n", usable_min_stack());
    run_list(ops, sizeof(ops) / sizeof(ops[0]), small, first, stack);
    const char *m = getenv("STACK_MISUSE");
    if (m && strcmp(m, "1") == 0)
        run_list(misuse, sizeof(misuse) / sizeof(misuse[0]), small, first, stack);
    printf("OK\n");
    return 0;
}
