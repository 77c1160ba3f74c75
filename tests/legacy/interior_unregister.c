/*
 * interior_unregister - hipHostUnregister of a pointer into the middle of a
 * registered range (and of pointers that were never registered).
 *
 * A buffer pinned whole is "unpinned" through a pointer to one of its
 * slices. The runtime looks the slice up as if it were a registration and
 * aborts ("Memobj map does not have ptr"). The call must answer
 * hipErrorHostMemoryNotRegistered and leave the buffer pinned and working.
 */
#include "legacy.h"

#define N (64 * 1024)       /* 256 KiB */
#define SLICE (16 * 1024)   /* the slice starts 64 KiB in */

int main(void)
{
    int *buf = aligned_alloc(4096, N * sizeof(int));
    if (!buf)
        return 2;
    legacy_fill(buf, N, 0, 9);
    CHECK(hipHostRegister(buf, N * sizeof(int), hipHostRegisterMapped));
    int *dbuf;
    CHECK(hipHostGetDevicePointer((void **)&dbuf, buf, 0));

    static struct kargs args;
    args = (struct kargs){ .dev = dbuf, .n = N, .add = 1, .work_us = 10000 };
    CHECK(simhipLaunchKernel(0, add_kernel, &args));

    EXPECT_ERR(hipHostUnregister(buf + SLICE), hipErrorHostMemoryNotRegistered);

    /* the whole buffer is still pinned: run over all of it again */
    CHECK(hipDeviceSynchronize());
    args = (struct kargs){ .dev = dbuf, .n = N, .add = 2 };
    CHECK(simhipLaunchKernel(0, add_kernel, &args));
    CHECK(hipDeviceSynchronize());
    legacy_verify("buf", buf, N, 0, 9, 3);

    /* pointers that were never registered */
    int local[16];
    int *never = malloc(4096);
    EXPECT_ERR(hipHostUnregister(local), hipErrorHostMemoryNotRegistered);
    EXPECT_ERR(hipHostUnregister(never), hipErrorHostMemoryNotRegistered);
    free(never);

    CHECK(hipHostUnregister(buf));
    free(buf);
    return legacy_finish();
}
