/*
 * tail_unmap - munmap of the tail pages of a registered buffer that the
 * program keeps using.
 *
 * A program registers a 4-page staging buffer, then shrinks it: it
 * unmaps the last 2 pages (no longer needed) and keeps using the first 2
 * with the device, then unregisters the buffer by its base. Without
 * safepin that works: the registration is the runtime's, whole, until the
 * unregister. Under safepin the unmap must not release the registration
 * the head still needs (its base was not unmapped), and the unmapped
 * pages must not be handed to a new mapping while they are still pinned
 * (G7: a later allocation never inherits a registration).
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
    if (munmap(p + 2 * PAGE, 2 * PAGE) != 0)
        return 2;

    static struct kargs a;
    a = (struct kargs){ .dev = d, .n = NI, .add = 1 };
    CHECK(simhipLaunchKernel(s, add_kernel, &a));
    CHECK(hipStreamSynchronize(s));
    legacy_verify("head after the tail's unmap", (int *)p, NI, 0, 4, 1);
    EXPECT_ERR(hipHostUnregister(p), hipSuccess);
    munmap(p, 2 * PAGE);
    CHECK(hipStreamDestroy(s));
    return legacy_finish();
}
