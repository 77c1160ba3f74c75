/*
 * fork_after_unmap - fork while an unmap of registered memory is pending.
 *
 * A program unmaps a buffer it forgot to unregister while the device is
 * busy with other work, then forks a helper. Without safepin the pages are
 * gone from the process at once, so the child inherits no mapping there:
 * it can map its own memory at that address (MAP_FIXED_NOREPLACE) and
 * reading the old address would fault. Under safepin the unmap waits for
 * the release (G2, G7); the child, which forgets the parent's registry and
 * pending work (G9), must not inherit the pages the program gave up either.
 */
#include <errno.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include "legacy.h"

#define LEN (16 * 4096)

int main(void)
{
    hipStream_t busy;
    CHECK(hipStreamCreateWithFlags(&busy, hipStreamNonBlocking));
    char *p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return 2;
    memset(p, 7, LEN);
    CHECK(hipHostRegister(p, LEN, 0));
    /* Unrelated device work, long enough to keep a release pending. */
    static struct kargs slow;
    slow = (struct kargs){ .dev = NULL, .n = 0, .work_us = 300 * 1000 };
    CHECK(simhipLaunchKernel(busy, add_kernel, &slow));
    if (munmap(p, LEN) != 0)
        return 2;

    pid_t c = fork();
    if (c < 0)
        return 2;
    if (c == 0) {
        unsigned char vec[16];
        int bad = 0;
        if (mincore(p, LEN, vec) == 0 || errno != ENOMEM) {
            fprintf(stderr, "child: the unmapped pages are still mapped\n");
            bad = 1;
        }
        void *q = mmap(p, LEN, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        if (q != p) {
            fprintf(stderr, "child: mmap(MAP_FIXED_NOREPLACE) at the old address: %s\n",
                    q == MAP_FAILED ? strerror(errno) : "placed elsewhere");
            bad = 1;
        }
        _exit(bad);
    }
    int st = 0;
    if (waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "child failed (status 0x%x)\n", st);
        (*legacy_failures())++;
    }
    CHECK(hipStreamSynchronize(busy));
    CHECK(hipStreamDestroy(busy));
    return legacy_finish();
}
