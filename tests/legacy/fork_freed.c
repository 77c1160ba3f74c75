/*
 * fork_freed - a child forked right after its parent freed a registered
 * 1 MiB block (unregistered first, while the device was busy).
 *
 * Bare, the free gives the block's mapping back at once: the child can map
 * its own memory there. Under safepin the free waits for the release (G2):
 * the fork must not hand the child that pending state, nor the block.
 * (It rests on glibc's allocator giving a large block back to the system:
 * a sanitizer's allocator keeps it, so the sanitized runs leave it out.)
 */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include "legacy.h"
#include "legacy_fork.h"

#define BLOCK (1u << 20)

static void freed(hipStream_t s)
{
    char *b = malloc(BLOCK);
    if (!b)
        exit(2);
    /* The address the block leaves behind, kept as a number: only mapped
     * again, never dereferenced, after the free. */
    volatile uintptr_t page_at = ((uintptr_t)b + 4095) & ~(uintptr_t)4095;
    memset(b, 1, BLOCK);
    CHECK(hipHostRegister(b, BLOCK, 0));
    legacy_busy(s, 100 * 1000);
    CHECK(hipHostUnregister(b));
    free(b);
    fflush(NULL);
    pid_t c = fork();
    if (c == 0) {
        void *page = (void *)page_at;
        void *q = mmap(page, 4096, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        if (q != page) {
            fprintf(stderr, "freed: the child cannot map memory where the parent freed its block: "
                            "%s\n", q == MAP_FAILED ? strerror(errno) : "placed elsewhere");
            _exit(1);
        }
        _exit(0);
    }
    legacy_wait_child(c, "freed");
}

int main(void)
{
    /* A fixed threshold: every 1 MiB block is a mapping of its own, given
     * back to the system by free (glibc would raise it after the first). */
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    for (int round = 0; round < 3; round++)
        freed(s);
    CHECK(hipStreamSynchronize(s));
    CHECK(hipStreamDestroy(s));
    return legacy_finish();
}
