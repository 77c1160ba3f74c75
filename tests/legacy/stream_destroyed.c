/*
 * stream_destroyed - work queued on a stream that the program destroys
 * before it unregisters the memory that work uses.
 *
 * hipStreamDestroy returns at once and the queued work still completes.
 * Stream A is destroyed by the host; stream B by a host function on another
 * stream. Then the buffer is unregistered and the host waits for the device.
 * ROCm 5.2-5.5 unregister finishes only the null stream: the destroyed
 * streams' kernels touch unpinned memory and the GPU faults.
 */
#include "legacy.h"

#define N (64 * 1024)

static hipStream_t stream_b;

static void destroy_b(hipStream_t s, hipError_t status, void *ud)
{
    (void)s; (void)status; (void)ud;
    if (hipStreamDestroy(stream_b) != hipSuccess)
        fprintf(stderr, "hipStreamDestroy(stream_b) from a host function failed\n");
}

int main(void)
{
    size_t bytes = 2 * N * sizeof(int);
    int *buf = aligned_alloc(4096, bytes);
    if (!buf)
        return 2;
    legacy_fill(buf, 2 * N, 0, 5);
    CHECK(hipHostRegister(buf, bytes, hipHostRegisterMapped));
    int *dbuf;
    CHECK(hipHostGetDevicePointer((void **)&dbuf, buf, 0));

    hipStream_t a, other;
    CHECK(hipStreamCreateWithFlags(&a, hipStreamNonBlocking));
    CHECK(hipStreamCreateWithFlags(&stream_b, hipStreamNonBlocking));
    CHECK(hipStreamCreateWithFlags(&other, hipStreamNonBlocking));
    static struct kargs ka, kb;
    ka = (struct kargs){ .dev = dbuf, .n = N, .add = 1, .work_us = 80000 };
    kb = (struct kargs){ .dev = dbuf + N, .n = N, .add = 2, .work_us = 80000 };
    CHECK(simhipLaunchKernel(a, add_kernel, &ka));
    CHECK(simhipLaunchKernel(stream_b, add_kernel, &kb));
    CHECK(hipStreamDestroy(a));
    CHECK(hipStreamAddCallback(other, destroy_b, NULL, 0));
    CHECK(hipStreamSynchronize(other));

    CHECK(hipHostUnregister(buf)); /* the destroyed streams still run */
    CHECK(hipDeviceSynchronize());
    legacy_verify("stream a's half", buf, N, 0, 5, 1);
    legacy_verify("stream b's half", buf + N, N, N, 5, 2);
    CHECK(hipStreamDestroy(other));
    free(buf);
    return legacy_finish();
}
