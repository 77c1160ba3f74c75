/*
 * hole_in_range_unmap - munmap of a registered buffer whose tail the
 * program unmapped earlier, then a new mapping where that tail was.
 *
 * A program registers a 4-page buffer, shrinks it (unmaps the last 2
 * pages) and keeps using the head with the device (tail_unmap), then,
 * forgetting to unregister, unmaps the buffer by its original span while
 * other device work still runs, and maps a new 2-page block with the old
 * tail's address as its hint: the kernel, which sees that address free,
 * places it there. Without safepin that works: the munmap removed only
 * what was mapped. Under safepin the munmap frees memory still registered:
 * its pages are kept until the release, and their deferred unmap must not
 * take the new block with it (a crash, or lost data).
 */
#include <sys/mman.h>
#include "legacy.h"

#define PAGE 4096
#define NI (2 * PAGE / (int)sizeof(int))

int main(void)
{
    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    char *p = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return 2;
    legacy_fill((int *)p, NI, 0, 4);
    CHECK(hipHostRegister(p, 4 * PAGE, hipHostRegisterMapped));
    int *d;
    CHECK(hipHostGetDevicePointer((void **)&d, p, 0));
    if (munmap(p + 2 * PAGE, 2 * PAGE) != 0)
        return 2;
    static struct kargs a;
    a = (struct kargs){ .dev = d, .n = NI, .add = 1 };
    CHECK(simhipLaunchKernel(s, add_kernel, &a));
    CHECK(hipStreamSynchronize(s));
    legacy_verify("head after the tail's unmap", (int *)p, NI, 0, 4, 1);

    /* Other device work, still running when the buffer goes. */
    static struct kargs busy;
    busy = (struct kargs){ .dev = NULL, .n = 0, .work_us = 200000 };
    CHECK(simhipLaunchKernel(s, add_kernel, &busy));
    if (munmap(p, 4 * PAGE) != 0) {
        perror("munmap");
        return 1;
    }
    int *q = mmap(p + 2 * PAGE, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (q == MAP_FAILED)
        return 2;
    legacy_fill(q, NI, 0, 7);
    CHECK(hipStreamSynchronize(s));
    CHECK(hipDeviceSynchronize());
    usleep(50000); /* the release and its deferred unmap are done by now */
    legacy_verify("the new block", q, NI, 0, 7, 0);
    munmap(q, 2 * PAGE);
    CHECK(hipStreamDestroy(s));
    return legacy_finish();
}
