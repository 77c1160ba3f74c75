/*
 * hipfree_host_ptr - hipFree of a registered host pointer.
 *
 * Cleanup code that frees every "GPU buffer" with hipFree, including one
 * that is really pinned host memory. The runtime looks it up as a device
 * allocation and aborts ("Memobj map does not have ptr"). The call must
 * answer hipErrorInvalidValue and leave the registration untouched.
 */
#include "legacy.h"

#define N (32 * 1024)

int main(void)
{
    int *host = aligned_alloc(4096, N * sizeof(int));
    if (!host)
        return 2;
    legacy_fill(host, N, 0, 10);
    CHECK(hipHostRegister(host, N * sizeof(int), hipHostRegisterMapped));
    int *dhost;
    CHECK(hipHostGetDevicePointer((void **)&dhost, host, 0));

    int *dev;
    CHECK(hipMalloc((void **)&dev, N * sizeof(int)));
    CHECK(hipMemcpy(dev, host, N * sizeof(int), hipMemcpyHostToDevice));

    static struct kargs args;
    args = (struct kargs){ .dev = dhost, .n = N, .add = 1, .work_us = 10000 };
    CHECK(simhipLaunchKernel(0, add_kernel, &args));

    /* "free all the GPU buffers" */
    CHECK(hipFree(dev));
    EXPECT_ERR(hipFree(host), hipErrorInvalidValue);

    /* the registration is untouched: use all of it again */
    CHECK(hipDeviceSynchronize());
    args = (struct kargs){ .dev = dhost, .n = N, .add = 2 };
    CHECK(simhipLaunchKernel(0, add_kernel, &args));
    CHECK(hipDeviceSynchronize());
    legacy_verify("host", host, N, 0, 10, 3);

    CHECK(hipHostUnregister(host));
    free(host);
    return legacy_finish();
}
