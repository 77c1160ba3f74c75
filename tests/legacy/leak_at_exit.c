/*
 * leak_at_exit - a registration still live, with a kernel still running on
 * it, when the program exits.
 *
 * A tool pins its buffer, checks one result, starts a last kernel on a
 * non-blocking stream and returns from main without waiting or unpinning.
 * The runtime says nothing of the leaked registration; the process may be
 * torn down under the running kernel.
 */
#include "legacy.h"

#define N (64 * 1024)

int main(void)
{
    int *buf = aligned_alloc(4096, N * sizeof(int));
    if (!buf)
        return 2;
    hipStream_t stream;
    CHECK(hipStreamCreateWithFlags(&stream, hipStreamNonBlocking));
    CHECK(hipHostRegister(buf, N * sizeof(int), hipHostRegisterMapped));
    int *dbuf;
    CHECK(hipHostGetDevicePointer((void **)&dbuf, buf, 0));

    static struct kargs first, last;
    first = (struct kargs){ .dev = dbuf, .n = N, .seed = 12 };
    CHECK(simhipLaunchKernel(stream, fill_kernel, &first));
    CHECK(hipStreamSynchronize(stream));
    legacy_verify("buf", buf, N, 0, 12, 0);

    last = (struct kargs){ .dev = dbuf, .n = N, .add = 1, .work_us = 30000 };
    CHECK(simhipLaunchKernel(stream, add_kernel, &last));
    return legacy_finish(); /* no sync, no unregister, no free */
}
