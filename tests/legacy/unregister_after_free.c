/*
 * unregister_after_free - memory freed or unmapped while registered, then
 * unregistered by the program, as sloppy cleanup code does.
 *
 * Without safepin the runtime keeps the stale registration until the
 * program unregisters it, and that unregister succeeds. Under safepin the
 * free released the registration (freed-while-registered); the program's
 * unregister that follows must still get the runtime's answer for it,
 * success (not "not registered", nor a double-unregister report), whether
 * the release is still under way or has completed. A second unregister
 * of the same base is refused, as without safepin. The cases:
 *   munmap     an mmap'd 1 MiB, unmapped, then unregistered at once;
 *   munmap+    the same, unregistered 200 ms later (the release done);
 *   free       a 64 KiB malloc block, freed, then unregistered;
 *   mremap     a mapping moved over the registered one (MREMAP_FIXED);
 *   refused    unmapped, then registered again at its address (refused:
 *              nothing is mapped there), then unregistered;
 *   many       1100 pages unmapped while registered, unregistered after
 *              every release is done (more than safepin's record of recent
 *              releases holds).
 */
#include <sys/mman.h>
#include "legacy.h"

#define MAPLEN (1ul << 20)
#define BLOCK (64ul << 10)

static char *map(void)
{
    char *p = mmap(NULL, MAPLEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        exit(2);
    memset(p, 1, MAPLEN);
    return p;
}

static void second(void *p, const char *what)
{
    if (hipHostUnregister(p) == hipSuccess) {
        fprintf(stderr, "%s: a second unregister succeeded\n", what);
        (*legacy_failures())++;
    }
}

int main(void)
{
    for (int round = 0; round < 4; round++) {
        char *r = map();
        CHECK(hipHostRegister(r, MAPLEN, 0));
        munmap(r, MAPLEN);
        if (round & 1)
            usleep(200 * 1000);
        EXPECT_ERR(hipHostUnregister(r), hipSuccess);
        second(r, "munmap");

        char *b = malloc(BLOCK);
        if (!b)
            return 2;
        memset(b, 2, BLOCK);
        CHECK(hipHostRegister(b, BLOCK, 0));
        char *addr = b; /* the address only, never used as memory after the free */
        __asm__("" : "+r"(addr)); /* (hidden from the compiler's use-after-free check) */
        free(b);
        b = addr;
        if (round & 1)
            usleep(200 * 1000);
        EXPECT_ERR(hipHostUnregister(b), hipSuccess);
        second(b, "free");

        char *dst = map(), *src = map();
        CHECK(hipHostRegister(dst, MAPLEN, 0));
        if (mremap(src, MAPLEN, MAPLEN, MREMAP_MAYMOVE | MREMAP_FIXED, dst) != dst)
            return 2;
        EXPECT_ERR(hipHostUnregister(dst), hipSuccess);
        second(dst, "mremap");
        munmap(dst, MAPLEN);
    }

    char *r = map();
    CHECK(hipHostRegister(r, MAPLEN, 0));
    munmap(r, MAPLEN);
    if (hipHostRegister(r, MAPLEN, 0) == hipSuccess) {
        fprintf(stderr, "refused: a register of unmapped memory succeeded\n");
        (*legacy_failures())++;
    }
    EXPECT_ERR(hipHostUnregister(r), hipSuccess);
    second(r, "refused");

    enum { MANY = 1100 };
    char *pages = mmap(NULL, MANY * 4096ul, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                       -1, 0);
    if (pages == MAP_FAILED)
        return 2;
    memset(pages, 3, MANY * 4096ul);
    for (int i = 0; i < MANY; i++)
        CHECK(hipHostRegister(pages + i * 4096ul, 4096, 0));
    munmap(pages, MANY * 4096ul); /* every page still registered */
    CHECK(hipDeviceSynchronize());
    usleep(500 * 1000); /* every release done */
    int refused = 0;
    for (int i = 0; i < MANY; i++)
        refused += hipHostUnregister(pages + i * 4096ul) != hipSuccess;
    if (refused) {
        fprintf(stderr, "many: %d of %d unregisters after the free refused\n", refused, MANY);
        (*legacy_failures())++;
    }
    return legacy_finish();
}
