/*
 * refused_fixed_mmap - fixed mappings the kernel refuses, over registered
 * memory: they change nothing, and say why with the kernel's errno.
 *   - MAP_SHARED | MAP_PRIVATE together: EINVAL;
 *   - MAP_HUGETLB at an address that is not huge-page aligned: EINVAL.
 * The registration stays: the later unregister succeeds.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include "legacy.h"

int main(void)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE), bytes = 4 * pg;
    char *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return 2;
    memset(m, 1, bytes);
    CHECK(hipHostRegister(m, bytes, 0));
    struct { int flags; const char *what; } cases[] = {
        { MAP_SHARED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, "MAP_SHARED|MAP_PRIVATE" },
        { MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_HUGETLB, "MAP_HUGETLB, misaligned" },
    };
    /* A page inside the registration that is not 2 MiB aligned (the
     * huge-page case must be misaligned whatever address mmap gave). */
    char *t = ((uintptr_t)(m + pg) & ((2u << 20) - 1)) ? m + pg : m + 2 * pg;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        errno = 0;
        void *r = mmap(t, pg, PROT_READ, cases[i].flags, -1, 0);
        if (r != MAP_FAILED || errno != EINVAL) {
            fprintf(stderr, "mmap(%s) returned %p errno %d, expected MAP_FAILED/EINVAL\n",
                    cases[i].what, r, errno);
            (*legacy_failures())++;
        }
    }
    if (t[0] != 1) {
        fprintf(stderr, "corrupted data after a refused mmap\n");
        (*legacy_failures())++;
    }
    EXPECT_ERR(hipHostUnregister(m), hipSuccess);
    munmap(m, bytes);
    return legacy_finish();
}
