/*
 * bad_args - registration calls with arguments that are plainly wrong.
 *
 * Register NULL, register zero bytes, unregister NULL: each must answer
 * hipErrorInvalidValue, and a good registration made afterwards works.
 */
#include "legacy.h"

#define N 4096

int main(void)
{
    int *buf = aligned_alloc(4096, N * sizeof(int));
    if (!buf)
        return 2;
    legacy_fill(buf, N, 0, 13);

    EXPECT_ERR(hipHostRegister(NULL, 4096, hipHostRegisterMapped), hipErrorInvalidValue);
    EXPECT_ERR(hipHostRegister(buf, 0, hipHostRegisterMapped), hipErrorInvalidValue);
    EXPECT_ERR(hipHostUnregister(NULL), hipErrorInvalidValue);

    CHECK(hipHostRegister(buf, N * sizeof(int), hipHostRegisterMapped));
    int *dbuf;
    CHECK(hipHostGetDevicePointer((void **)&dbuf, buf, 0));
    static struct kargs args;
    args = (struct kargs){ .dev = dbuf, .n = N, .add = 6 };
    CHECK(simhipLaunchKernel(0, add_kernel, &args));
    CHECK(hipDeviceSynchronize());
    legacy_verify("buf", buf, N, 0, 13, 6);
    CHECK(hipHostUnregister(buf));
    free(buf);
    return legacy_finish();
}
