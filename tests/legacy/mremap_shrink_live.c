/*
 * mremap_shrink_live - mremap that shrinks a registered buffer in place;
 * the program keeps using the head.
 *
 * A program registers a 4-page staging buffer, shrinks it with mremap to
 * its first 2 pages (the tail no longer needed), keeps using the head with
 * the device through the device pointer it got at the start, then
 * unregisters the buffer by its base. Without safepin that works: the
 * registration is the runtime's, whole, until the unregister. Under
 * safepin the shrink must not release the registration the head still
 * needs (G7: its base stays mapped), as an munmap of the tail does not
 * (tail_unmap): released, the next kernel faults on the head.
 */
#include <errno.h>
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
    if (mremap(p, 4 * PAGE, 2 * PAGE, 0) != p)
        return 2;
    for (int round = 1; round <= 3; round++) {
        static struct kargs a;
        a = (struct kargs){ .dev = d, .n = NI, .add = 1, .work_us = 20000 };
        CHECK(simhipLaunchKernel(s, add_kernel, &a));
        CHECK(hipStreamSynchronize(s));
        legacy_verify("head after the shrink", (int *)p, NI, 0, 4, round);
        int *d2;
        EXPECT_ERR(hipHostGetDevicePointer((void **)&d2, p, 0), hipSuccess);
    }
    EXPECT_ERR(hipHostUnregister(p), hipSuccess);
    munmap(p, 2 * PAGE);
    CHECK(hipStreamDestroy(s));
    return legacy_finish();
}
