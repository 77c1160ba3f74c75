/*
 * alloc_heavy - a whole program that allocates heavily, for the whole-program
 * rows: what safepin's libc hooks (free, realloc, munmap, madvise, mmap)
 * cost a program that registers nothing, or a few long-lived buffers.
 *
 *   alloc_heavy [threads=4] [ops=1000000] [registered=0] [seed=1]
 *
 * `threads` threads each run `ops` operations on a table of 4096 slots of
 * their own, chosen by a xorshift generator: an empty slot gets a block
 * (malloc, or calloc one time in eight), a full one is freed, or (one time
 * in four) realloc'd to another size. Sizes: mostly 16-512 B, one in eight
 * up to 16 KiB, one in 256 from 128 KiB to 1 MiB (above glibc's initial
 * mmap threshold). Every block is written at both ends. One operation in
 * 512 also maps 64 KiB-1 MiB of anonymous memory, writes it, gives half of
 * it back with madvise(MADV_DONTNEED) and unmaps it.
 *
 * registered=N first registers N buffers of 1 MiB, taken from malloc and
 * kept registered through the churn (a program's pinned staging buffers):
 * the hooks then take their registered path (is this block in a registered
 * range?) on every free and realloc. With N = 0 the runtime is still
 * initialized, so both cases load and start the same things.
 *
 * The figure is the wall time of the churn (threads started at one barrier
 * to the last join), and the process's CPU time over the same span:
 *
 *   BENCH wall_ms=<ms> cpu_ms=<ms> ops_per_s=<n> threads=<T> registered=<N> maps=<n>
 *
 * The runtime is chosen at build time: HIP by default (make all: linked
 * with libamdhip64, run on simhip), -DALLOC_HEAVY_CUDA for NVIDIA's runtime
 * API (make gpu-bench: cudaHostRegister), -DALLOC_HEAVY_NO_RUNTIME for none
 * (registered must then be 0). Exit status 0, or 1 on a failed call.
 */
#include "bench_common.h"

#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#if defined(ALLOC_HEAVY_CUDA)
#include <cuda_runtime_api.h>
#define RT_NAME "cuda"
#define RT_OK(e) ((e) == cudaSuccess)
#define rt_init() cudaFree(0)
#define rt_register(p, n) cudaHostRegister((p), (n), cudaHostRegisterDefault)
#define rt_unregister(p) cudaHostUnregister(p)
#elif defined(ALLOC_HEAVY_NO_RUNTIME)
#define RT_NONE 1
#define RT_NAME "none"
#define RT_OK(e) ((e) == 0)
#define rt_init() 0
#define rt_register(p, n) ((void)(p), (void)(n), -1)
#define rt_unregister(p) ((void)(p), -1)
#else
#include <hip/hip_runtime_api.h>
#define RT_NAME "hip"
#define RT_OK(e) ((e) == hipSuccess)
#define rt_init() hipFree(NULL)
#define rt_register(p, n) hipHostRegister((p), (n), hipHostRegisterDefault)
#define rt_unregister(p) hipHostUnregister(p)
#endif

#define SLOTS 4096
#define MAX_THREADS 64
#define REG_BYTES ((size_t)1 << 20)

struct worker {
    pthread_t th;
    uint64_t rng;
    int ops;
    unsigned long maps;
    char pad[64];
};

static pthread_barrier_t start;

static inline uint64_t next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

static size_t pick_size(uint64_t r)
{
    unsigned k = (unsigned)(r >> 40);
    if ((k & 255) == 0)
        return ((size_t)128 << 10) + (size_t)(r % (896u << 10)); /* 128 KiB - 1 MiB */
    if ((k & 7) == 0)
        return 512 + (size_t)(r % (16u << 10)); /* up to 16 KiB */
    return 16 + (size_t)(r % 497); /* 16-512 B */
}

static void touch(char *p, size_t n, uint64_t r)
{
    p[0] = (char)r;
    p[n - 1] = (char)(r >> 8);
}

/* Map, write, give half back, unmap: what a program's own mappings see. */
static void map_churn(uint64_t r)
{
    size_t n = ((size_t)64 << 10) << (r % 3); /* 64-256 KiB */
    char *m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        perror("alloc_heavy: mmap");
        exit(1);
    }
    for (size_t off = 0; off < n; off += 4096)
        m[off] = (char)off;
    if (madvise(m + n / 2, n / 2, MADV_DONTNEED) != 0) {
        perror("alloc_heavy: madvise");
        exit(1);
    }
    if (munmap(m, n) != 0) {
        perror("alloc_heavy: munmap");
        exit(1);
    }
}

static void *work(void *arg)
{
    struct worker *w = arg;
    char *slot[SLOTS] = { 0 };
    pthread_barrier_wait(&start);
    for (int i = 0; i < w->ops; i++) {
        uint64_t r = next(&w->rng);
        unsigned s = (unsigned)(r & (SLOTS - 1));
        uint64_t r2 = next(&w->rng);
        if (!slot[s]) {
            size_t n = pick_size(r2);
            char *p = (r2 & 7) == 0 ? calloc(1, n) : malloc(n);
            if (!p) {
                fprintf(stderr, "alloc_heavy: malloc(%zu) failed\n", n);
                exit(1);
            }
            touch(p, n, r2);
            slot[s] = p;
        } else if ((r2 & 3) == 0) {
            size_t n = pick_size(next(&w->rng));
            char *p = realloc(slot[s], n);
            if (!p) {
                fprintf(stderr, "alloc_heavy: realloc(%zu) failed\n", n);
                exit(1);
            }
            touch(p, n, r2);
            slot[s] = p;
        } else {
            free(slot[s]);
            slot[s] = NULL;
        }
        if ((r & (4095ull << 12)) == 0) {
            map_churn(r2);
            w->maps++;
        }
    }
    for (unsigned s = 0; s < SLOTS; s++) {
        free(slot[s]);
        slot[s] = NULL;
    }
    return NULL;
}

static double cpu_ms(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
           (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
}

int main(int argc, char **argv)
{
    int threads = arg_int(argc, argv, "threads", 4);
    int ops = arg_int(argc, argv, "ops", 1000000);
    int registered = arg_int(argc, argv, "registered", 0);
    int seed = arg_int(argc, argv, "seed", 1);
    if (threads < 1 || threads > MAX_THREADS || ops < 1 || registered < 0) {
        fprintf(stderr, "usage: alloc_heavy [threads=1..%d] [ops=N] [registered=N] [seed=N]\n",
                MAX_THREADS);
        return 2;
    }

#ifdef RT_NONE
    if (registered) {
        fprintf(stderr, "alloc_heavy: built without a runtime (ALLOC_HEAVY_NO_RUNTIME): "
                        "registered must be 0\n");
        return 2;
    }
#endif
    if (!RT_OK(rt_init())) {
        fprintf(stderr, "alloc_heavy: the %s runtime did not initialize\n", RT_NAME);
        return 1;
    }
    char **reg = calloc((size_t)registered + 1, sizeof *reg);
    for (int i = 0; i < registered; i++) {
        reg[i] = malloc(REG_BYTES);
        if (!reg[i]) {
            fprintf(stderr, "alloc_heavy: malloc failed\n");
            return 1;
        }
        memset(reg[i], i, REG_BYTES);
        if (!RT_OK(rt_register(reg[i], REG_BYTES))) {
            fprintf(stderr, "alloc_heavy: registering buffer %d failed (runtime %s)\n", i,
                    RT_NAME);
            return 1;
        }
    }

    static struct worker w[MAX_THREADS];
    pthread_barrier_init(&start, NULL, (unsigned)threads + 1);
    for (int i = 0; i < threads; i++) {
        w[i].rng = 0x9e3779b97f4a7c15ull * (uint64_t)(seed * MAX_THREADS + i + 1);
        w[i].ops = ops;
        if (pthread_create(&w[i].th, NULL, work, &w[i]) != 0) {
            fprintf(stderr, "alloc_heavy: pthread_create failed\n");
            return 1;
        }
    }
    double c0 = cpu_ms();
    uint64_t t0 = now_ns();
    pthread_barrier_wait(&start);
    unsigned long maps = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(w[i].th, NULL);
        maps += w[i].maps;
    }
    double wall = (double)(now_ns() - t0) / 1e6, cpu = cpu_ms() - c0;

    for (int i = 0; i < registered; i++) {
        if (!RT_OK(rt_unregister(reg[i]))) {
            fprintf(stderr, "alloc_heavy: unregistering buffer %d failed\n", i);
            return 1;
        }
        free(reg[i]);
    }
    free(reg);
    printf("BENCH wall_ms=%.3f cpu_ms=%.3f ops_per_s=%.0f threads=%d registered=%d maps=%lu\n",
           wall, cpu, (double)threads * ops / (wall / 1e3), threads, registered, maps);
    return 0;
}
