/*
 * linked - a program as built against ROCm 6 or 7: linked with
 * libamdhip64.so.6 or .so.7 (simhip under those sonames), so its references
 * are versioned the way clr versions them (hipHostRegister@hip_4.2,
 * hipGetProcAddress@hip_6.1). tests/soname/run.sh builds it against both and
 * shows each hazard below happening bare and prevented under safepin: its
 * interposition must depend neither on the soname nor on the version node.
 *
 *   linked interior  unregister a pointer inside a registered range (the
 *                    runtime aborts: "Memobj map does not have ptr"; safepin:
 *                    713, unregister-interior, the range keeps working)
 *   linked procaddr  the same through pointers from hipGetProcAddress
 *   linked stale     munmap a registered mapping, map and register the same
 *                    address again (newer clr: 712 from the stale
 *                    registration; safepin: released first, the device
 *                    writes the new mapping)
 */
#include <string.h>
#include <sys/mman.h>
#include "legacy.h"

#define N 4096 /* ints: 16 KiB */

typedef hipError_t (*unregister_fn)(void *);
typedef hipError_t (*register_fn)(void *, size_t, unsigned int);
typedef hipError_t (*procaddr_fn)(const char *, void **, int, uint64_t, int *);
hipError_t hipGetProcAddress(const char *symbol, void **pfn, int hipVersion, uint64_t flags,
                             int *symbolStatus);

static int *map_ints(void *hint)
{
    void *p = mmap(hint, N * sizeof(int), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        exit(2);
    }
    return p;
}

static int interior_unregister(register_fn reg, unregister_fn unreg)
{
    static struct kargs args;
    int *p = map_ints(NULL);
    legacy_fill(p, N, 0, 5);
    CHECK(reg(p, N * sizeof(int), hipHostRegisterMapped));
    EXPECT_ERR(unreg(p + 1024), hipErrorHostMemoryNotRegistered);
    int *d;
    CHECK(hipHostGetDevicePointer((void **)&d, p, 0));
    args = (struct kargs){ .dev = d, .n = N, .add = 1 };
    CHECK(simhipLaunchKernel(0, add_kernel, &args)); /* the range still works */
    CHECK(hipStreamSynchronize(0));
    legacy_verify("range", p, N, 0, 5, 1);
    CHECK(unreg(p));
    munmap(p, N * sizeof(int));
    return legacy_finish();
}

static int stale(void)
{
    static struct kargs args;
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    int *a = map_ints(NULL);
    CHECK(hipHostRegister(a, N * sizeof(int), hipHostRegisterMapped));
    munmap(a, N * sizeof(int)); /* forgot hipHostUnregister */
    int *b = map_ints(a);
    if (b != a)
        printf("note: second mapping at %p, not %p\n", (void *)b, (void *)a);
    legacy_fill(b, N, 0, 3);
    CHECK(hipHostRegister(b, N * sizeof(int), hipHostRegisterMapped));
    int *d;
    CHECK(hipHostGetDevicePointer((void **)&d, b, 0));
    args = (struct kargs){ .dev = d, .n = N, .add = 4 };
    CHECK(simhipLaunchKernel(s, add_kernel, &args));
    CHECK(hipStreamSynchronize(s));
    legacy_verify("second mapping", b, N, 0, 3, 4);
    CHECK(hipHostUnregister(b));
    munmap(b, N * sizeof(int));
    CHECK(hipStreamDestroy(s));
    return legacy_finish();
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "";
    if (!strcmp(what, "interior"))
        return interior_unregister(hipHostRegister, hipHostUnregister);
    if (!strcmp(what, "procaddr")) {
        void *r = NULL, *u = NULL;
        int st = -1;
        CHECK(hipGetProcAddress("hipHostRegister", &r, 60100000, 0, &st));
        CHECK(hipGetProcAddress("hipHostUnregister", &u, 60100000, 0, &st));
        return interior_unregister((register_fn)r, (unregister_fn)u);
    }
    if (!strcmp(what, "stale"))
        return stale();
    fprintf(stderr, "usage: linked interior|procaddr|stale\n");
    return 2;
}
