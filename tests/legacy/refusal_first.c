/*
 * refusal_first - registrations no runtime can pin, each overlapping a live
 * registration: the runtime refuses their pages (an unmapped hole, a
 * PROT_NONE page, a read-only page without the read-only flag) with its
 * own code, and that answer is the program's, not an overlap's 712
 * (hipErrorHostMemoryAlreadyRegistered): the runtime's answer comes first.
 * So does a read-only range registered again right after its unregister.
 * (A pinnable overlap is another matter: ROCm before 7 accepts it, safepin
 * answers 712, G5.)
 */
#include <sys/mman.h>
#include "legacy.h"

/* ROCm 7 looks for an existing registration first, and answers 712. */
static void refused(const char *what, hipError_t got)
{
    int overlap_first = legacy_runtime_version() >= 70000000;
    if (got == hipSuccess || (got == hipErrorHostMemoryAlreadyRegistered && !overlap_first)) {
        fprintf(stderr, "%s: returned %s (%d), not the runtime's refusal of its pages\n", what,
                hipGetErrorName(got), (int)got);
        (*legacy_failures())++;
    }
}

int main(void)
{
    size_t pg = 4096, len = 16 * 4096;
    char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return 2;
    CHECK(hipHostRegister(m, 8 * pg, 0));
    /* pages 8..15 of the mapping: a hole at 9, PROT_NONE at 11, read-only at 13 */
    if (munmap(m + 9 * pg, pg) != 0 || mprotect(m + 11 * pg, pg, PROT_NONE) != 0 ||
        mprotect(m + 13 * pg, pg, PROT_READ) != 0)
        return 2;
    refused("a hole", hipHostRegister(m + 4 * pg, 6 * pg, 0));
    refused("a PROT_NONE page", hipHostRegister(m + 4 * pg, 8 * pg - pg / 2, 0));
    refused("a read-only page", hipHostRegister(m + 7 * pg, 7 * pg, 0));
    CHECK(hipHostUnregister(m));

    /* An identical register of a large range just unregistered (its
     * release may still be pending: safepin revives such a one), after the
     * program made its pages read-only: the runtime refuses them. */
    size_t big = 4u << 20;
    char *r = mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (r == MAP_FAILED)
        return 2;
    memset(r, 1, big);
    CHECK(hipHostRegister(r, big, 0));
    CHECK(hipHostUnregister(r));
    if (mprotect(r, big, PROT_READ) != 0)
        return 2;
    refused("a read-only range registered again", hipHostRegister(r, big, 0));
    return legacy_finish();
}
