/*
 * refusal_first.c - registrations the driver refuses for their pages, each
 * overlapping a live registration: the driver's code, not the overlap's.
 *
 * Measured on the H200 (driver 580, CUDA 13.0): a range from a heap pointer
 * up to 100 bytes inside a registered mapping (unmapped holes between)
 * returns 2 (CUDA_ERROR_OUT_OF_MEMORY), not 712; a read-only page inside a
 * registered range, 712 (the overlap: those pages were pinned already).
 * A PROT_NONE range that overlaps nothing returns 1 wherever it is asked,
 * and so does a read-only range with flags 0, also right after the same
 * range was unregistered.
 */
#include <sys/mman.h>

#include "legacy_cuda.h"

static int failures;

static void expect(const char *what, CUresult got, CUresult want)
{
    if (got != want) {
        fprintf(stderr, "%s: returned %s (%d), the driver's answer is %s (%d)\n", what,
                lc_name(got), (int)got, lc_name(want), (int)want);
        failures++;
    }
}

int main(void)
{
    lc_init();
    size_t len = 64u << 10;
    char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *h = malloc(100);
    char *none = mmap(NULL, 8192, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED || !h || none == MAP_FAILED)
        return 2;
    CHECK(cuMemHostRegister_v2(m, len, 0));
    if ((uintptr_t)h < (uintptr_t)m)
        expect("heap pointer to 100 bytes inside the registered mapping",
               cuMemHostRegister_v2(h, (size_t)(m + 100 - h), 0), CUDA_ERROR_OUT_OF_MEMORY);
    expect("a page inside the registered mapping",
           cuMemHostRegister_v2(m + 4096, 4096, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    expect("PROT_NONE", cuMemHostRegister_v2(none, 8192, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemHostUnregister(m));

    /* An identical register of a large range just unregistered (its
     * release may still be pending: safepin revives such a one), after the
     * program made its pages read-only: the driver refuses them (1). */
    size_t big = 4u << 20;
    char *r = mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (r == MAP_FAILED)
        return 2;
    memset(r, 1, big);
    CHECK(cuMemHostRegister_v2(r, big, 0));
    CHECK(cuMemHostUnregister(r));
    if (mprotect(r, big, PROT_READ) != 0)
        return 2;
    expect("a read-only range registered again", cuMemHostRegister_v2(r, big, 0),
           CUDA_ERROR_INVALID_VALUE);
    if (failures) {
        fprintf(stderr, "FAILED: %d check(s) failed\n", failures);
        return 1;
    }
    printf("OK\n");
    return 0;
}
