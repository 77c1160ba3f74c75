/*
 * unreg_busy_stream - hipHostUnregister while a non-blocking stream still
 * uses the range.
 *
 * A worker stream (created non-blocking, so it does not serialize with the
 * null stream) runs a long kernel on a pinned buffer. The host, done
 * "setting up", unpins the buffer right after the launch and only then waits
 * for the stream. ROCm 5.2-5.5 unregister finishes only the null stream, so
 * the kernel touches unpinned memory: the GPU faults.
 */
#include "legacy.h"

#define N (256 * 1024) /* 1 MiB of ints */

int main(void)
{
    size_t bytes = N * sizeof(int);
    int *buf = aligned_alloc(4096, bytes);
    if (!buf)
        return 2;
    legacy_fill(buf, N, 0, 11);

    hipStream_t stream;
    CHECK(hipStreamCreateWithFlags(&stream, hipStreamNonBlocking));
    CHECK(hipHostRegister(buf, bytes, hipHostRegisterMapped));
    int *dbuf;
    CHECK(hipHostGetDevicePointer((void **)&dbuf, buf, 0));

    static struct kargs args;
    args = (struct kargs){ .dev = dbuf, .n = N, .add = 7, .work_us = 50000 };
    CHECK(simhipLaunchKernel(stream, add_kernel, &args));

    CHECK(hipHostUnregister(buf)); /* too early: the kernel still runs */

    CHECK(hipStreamSynchronize(stream));
    legacy_verify("buf", buf, N, 0, 11, 7);

    CHECK(hipStreamDestroy(stream));
    free(buf);
    return legacy_finish();
}
