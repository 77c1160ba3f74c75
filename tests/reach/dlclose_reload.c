/*
 * dlclose_reload.c - a program that loads the HIP runtime as a plugin
 * (dlopen RTLD_LOCAL, dlsym), closes it while a release is still pending,
 * waits until the library is really gone, reserves the address range it
 * occupied (as any later mapping may take it), loads it again and uses the
 * new instance. With the argument "same", nothing is reserved: the new
 * instance is loaded where the old one was (its link map, too, in most
 * runs), and only the loader's counts tell them apart; the busy stream is
 * not destroyed before the dlclose (it goes with its instance).
 *
 * Without safepin the runtime is unloaded at dlclose. With safepin it must
 * stay loaded while safepin has work for it (the pending release), be
 * unloaded once that work is done, and safepin must then use the new
 * instance: no call into the old, unloaded code.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <hip/hip_runtime_api.h>

typedef hipError_t (*reg_t)(void *, size_t, unsigned);
typedef hipError_t (*unreg_t)(void *);
typedef hipError_t (*screate_t)(hipStream_t *, unsigned);
typedef hipError_t (*sdestroy_t)(hipStream_t);
typedef hipError_t (*ssync_t)(hipStream_t);
typedef hipError_t (*launch_t)(hipStream_t, void (*)(void *), void *);
typedef void (*dwrite_t)(void *, const void *, size_t);

#define LIB "libamdhip64.so.5"
#define N (64 * 1024)

struct rt {
    void *h;
    reg_t reg;
    unreg_t unreg;
    screate_t screate;
    sdestroy_t sdestroy;
    ssync_t ssync;
    launch_t launch;
    dwrite_t dwrite;
};

static struct rt rt;

static int load(void)
{
    rt.h = dlopen(LIB, RTLD_NOW | RTLD_LOCAL);
    if (!rt.h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return -1;
    }
#define L(field, type, name)                                                  \
    if (!(rt.field = (type)dlsym(rt.h, name))) {                              \
        fprintf(stderr, "dlsym(%s) failed\n", name);                          \
        return -1;                                                            \
    }
    L(reg, reg_t, "hipHostRegister");
    L(unreg, unreg_t, "hipHostUnregister");
    L(screate, screate_t, "hipStreamCreateWithFlags");
    L(sdestroy, sdestroy_t, "hipStreamDestroy");
    L(ssync, ssync_t, "hipStreamSynchronize");
    L(launch, launch_t, "simhip_launch_kernel");
    L(dwrite, dwrite_t, "simhip_device_write");
#undef L
    return 0;
}

struct job {
    int *dst;
    int seed;
    unsigned work_us;
};

static void fill(void *arg)
{
    struct job *j = arg;
    usleep(j->work_us);
    for (int i = 0; i < N; i++) {
        int v = i * 3 + j->seed;
        rt.dwrite(j->dst + i, &v, sizeof v);
    }
}

static void idle(void *arg)
{
    usleep(((struct job *)arg)->work_us);
}

static int check(const int *p, int seed)
{
    for (int i = 0; i < N; i++)
        if (p[i] != i * 3 + seed) {
            fprintf(stderr, "corrupted data at %d (seed %d)\n", i, seed);
            return -1;
        }
    return 0;
}

/* The runtime's address range, from its program headers. */
struct span {
    uintptr_t lo, hi;
    uintptr_t base;
};

static int find_span(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct span *sp = arg;
    if (info->dlpi_addr != sp->base)
        return 0;
    sp->lo = UINTPTR_MAX;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr, b = a + ph->p_memsz;
        if (a < sp->lo)
            sp->lo = a;
        if (b > sp->hi)
            sp->hi = b;
    }
    return 1;
}

int main(int argc, char **argv)
{
    int same = argc > 1 && strcmp(argv[1], "same") == 0;
    size_t bytes = N * sizeof(int);
    int *a = aligned_alloc(4096, bytes), *b = aligned_alloc(4096, bytes);
    if (!a || !b || load() != 0)
        return 2;

    /* 1. Fill a pinned buffer; unpin it while another stream still works. */
    hipStream_t s1, s2;
    if (rt.screate(&s1, hipStreamNonBlocking) || rt.screate(&s2, hipStreamNonBlocking))
        return 1;
    if (rt.reg(a, bytes, 0) != hipSuccess)
        return 1;
    struct job ja = {a, 1, 20000}, busy = {NULL, 0, 300000};
    if (rt.launch(s1, fill, &ja) || rt.ssync(s1) || rt.launch(s2, idle, &busy))
        return 1;
    if (rt.unreg(a) != hipSuccess) {
        fprintf(stderr, "hipHostUnregister(a) failed\n");
        return 1;
    }
    /* ("same": the busy stream is left to the runtime, as programs do.) */
    if (rt.sdestroy(s1) || (!same && rt.sdestroy(s2)))
        return 1;
    if (check(a, 1) != 0)
        return 1;

    /* 2. Close the runtime; wait until it is really unloaded. */
    Dl_info di;
    if (!dladdr((void *)rt.launch, &di))
        return 1;
    struct span sp = {0, 0, (uintptr_t)di.dli_fbase};
    dl_iterate_phdr(find_span, &sp);
    if (dlclose(rt.h) != 0)
        return 1;
    memset(&rt, 0, sizeof rt);
    for (int i = 0;; i++) {
        void *h = dlopen(LIB, RTLD_LAZY | RTLD_NOLOAD);
        if (!h)
            break;
        dlclose(h);
        if (i == 10000) {
            fprintf(stderr, "the runtime is never unloaded\n");
            return 1;
        }
        usleep(1000);
    }
    /* Whatever was mapped there is gone: hold the range. */
    uintptr_t lo = sp.lo & ~(uintptr_t)4095;
    if (!same && mmap((void *)lo, sp.hi - lo, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
             -1, 0) == MAP_FAILED) {
        perror("mmap over the old runtime");
        return 1;
    }

    /* 3. Load it again, and use the new instance. */
    if (load() != 0)
        return 2;
    hipStream_t s3;
    if (rt.screate(&s3, hipStreamNonBlocking) || rt.reg(b, bytes, 0) != hipSuccess)
        return 1;
    struct job jb = {b, 2, 20000};
    if (rt.launch(s3, fill, &jb) || rt.ssync(s3))
        return 1;
    if (rt.unreg(b) != hipSuccess) {
        fprintf(stderr, "hipHostUnregister(b) failed\n");
        return 1;
    }
    if (rt.sdestroy(s3) || check(b, 2) != 0)
        return 1;
    free(a);
    free(b);
    dlclose(rt.h);
    puts("OK");
    return 0;
}
