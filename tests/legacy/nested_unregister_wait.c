/*
 * nested_unregister_wait - the same range registered twice, a kernel still
 * writing it, then one hipHostUnregister and a read of what the kernel
 * wrote.
 *
 * The runtime's unregister waits for the device work enqueued before it
 * (ROCm 5.6+): the read sees the kernel's bytes. (The second register
 * nests in ROCm 6.x and under safepin, whose unregister then only ends the
 * nesting; rocm7 refuses it with 712.) An unregister that ends a nesting
 * without waiting lets the program read stale bytes.
 */
#include "legacy.h"

#define N (16 * 1024) /* 64 KiB of ints */

int main(void)
{
    size_t bytes = N * sizeof(int);
    int *buf = aligned_alloc(4096, bytes);
    if (!buf)
        return 2;
    legacy_fill(buf, N, 0, 21);

    hipStream_t stream;
    CHECK(hipStreamCreateWithFlags(&stream, hipStreamNonBlocking));
    CHECK(hipHostRegister(buf, bytes, hipHostRegisterMapped));
    hipError_t again = hipHostRegister(buf, bytes, hipHostRegisterMapped);
    if (again != hipSuccess && again != hipErrorHostMemoryAlreadyRegistered) {
        printf("second register: %d\n", (int)again);
        ++*legacy_failures();
    }
    int *dbuf;
    CHECK(hipHostGetDevicePointer((void **)&dbuf, buf, 0));

    static struct kargs args;
    args = (struct kargs){ .dev = dbuf, .n = N, .add = 4, .work_us = 200000 };
    CHECK(simhipLaunchKernel(stream, add_kernel, &args));

    CHECK(hipHostUnregister(buf));
    legacy_verify("after one unregister", buf, N, 0, 21, 4);
    if (again == hipSuccess)
        (void)hipHostUnregister(buf); /* nested under safepin; 713 bare (gone) */

    CHECK(hipStreamSynchronize(stream));
    CHECK(hipStreamDestroy(stream));
    free(buf);
    return legacy_finish();
}
