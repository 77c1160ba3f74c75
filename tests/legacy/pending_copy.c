/*
 * pending_copy - copies and queries right after hipHostUnregister.
 *
 * Once unregistered, the buffer is pageable memory: hipMemcpyAsync with a
 * pageable side has completed when it returns (device-to-host: the bytes are
 * there; host-to-device: the bytes written after the call are not sent),
 * and hipHostGetDevicePointer / hipHostGetFlags answer as for memory never
 * registered. The program relies on all of it.
 */
#include "legacy.h"

#define N (1024 * 1024) /* 4 MiB of ints */

int main(void)
{
    size_t bytes = N * sizeof(int);
    int *buf = aligned_alloc(4096, bytes);
    int *host = malloc(bytes);
    if (!buf || !host)
        return 2;
    legacy_fill(host, N, 0, 77);
    int *dev;
    CHECK(hipMalloc((void **)&dev, bytes));
    CHECK(hipMemcpy(dev, host, bytes, hipMemcpyHostToDevice));
    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    static struct kargs slow = { .n = 0, .work_us = 40000 };

    /* device-to-host into a just-unregistered buffer */
    memset(buf, 0, bytes);
    CHECK(hipHostRegister(buf, bytes, 0));
    CHECK(hipHostUnregister(buf));
    CHECK(simhipLaunchKernel(s, fill_kernel, &slow));
    CHECK(hipMemcpyAsync(buf, dev, bytes, hipMemcpyDeviceToHost, s));
    legacy_verify("device-to-host copy into unregistered memory", buf, N, 0, 77, 0);

    /* host-to-device from a just-unregistered buffer, overwritten after */
    CHECK(hipStreamSynchronize(s));
    legacy_fill(buf, N, 0, 88);
    CHECK(hipHostRegister(buf, bytes, 0));
    CHECK(hipHostUnregister(buf));
    CHECK(simhipLaunchKernel(s, fill_kernel, &slow));
    CHECK(hipMemcpyAsync(dev, buf, bytes, hipMemcpyHostToDevice, s));
    legacy_fill(buf, N, 0, 99); /* after the call: must not be sent */
    CHECK(hipStreamSynchronize(s));
    CHECK(hipMemcpy(host, dev, bytes, hipMemcpyDeviceToHost));
    legacy_verify("host-to-device copy from unregistered memory", host, N, 0, 88, 0);

    /* queries */
    CHECK(hipHostRegister(buf, bytes, hipHostRegisterMapped));
    CHECK(hipHostUnregister(buf));
    void *d = NULL;
    unsigned flags = 0;
    EXPECT_ERR(hipHostGetDevicePointer(&d, buf, 0), hipErrorInvalidValue);
    EXPECT_ERR(hipHostGetFlags(&flags, buf), hipErrorInvalidValue);

    CHECK(hipStreamDestroy(s));
    CHECK(hipFree(dev));
    free(buf);
    free(host);
    return legacy_finish();
}
