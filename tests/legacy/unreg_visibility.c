/*
 * unreg_visibility - reads device-written bytes right after
 * hipHostUnregister, with no synchronization of its own.
 *
 * Three shapes, each a slow kernel followed by a device write into a
 * registered buffer, then hipHostUnregister, then a read on the host:
 *   a. a hipMemsetAsync through the mapped device address, on a
 *      non-blocking stream;
 *   b. a hipMemcpyAsync device-to-host on the null stream;
 *   c. a hipMemcpyAsync device-to-host on a blocking stream, into a
 *      page-aligned mmap buffer.
 * ROCm 5.6+ synchronizes the device inside unregister, so this works there
 * (and on CUDA). ROCm 5.2-5.5 finishes only the null stream: shape a's
 * memset then runs on unpinned memory and the GPU faults.
 */
#include <sys/mman.h>
#include "legacy.h"

#define N (64 * 1024) /* ints per buffer */

static struct kargs slow = { .n = 0, .work_us = 60000 };

int main(void)
{
    size_t bytes = N * sizeof(int);
    int *src_host = malloc(bytes);
    if (!src_host)
        return 2;
    legacy_fill(src_host, N, 0, 42);
    int *dev;
    CHECK(hipMalloc((void **)&dev, bytes));
    CHECK(hipMemcpy(dev, src_host, bytes, hipMemcpyHostToDevice));

    /* a. mapped memset on a non-blocking stream */
    unsigned char *a = aligned_alloc(4096, bytes);
    memset(a, 0, bytes);
    hipStream_t nb;
    CHECK(hipStreamCreateWithFlags(&nb, hipStreamNonBlocking));
    CHECK(hipHostRegister(a, bytes, hipHostRegisterMapped));
    void *a_dev;
    CHECK(hipHostGetDevicePointer(&a_dev, a, 0));
    CHECK(simhipLaunchKernel(nb, fill_kernel, &slow));
    CHECK(hipMemsetAsync(a_dev, 0x5a, bytes, nb));
    CHECK(hipHostUnregister(a));
    for (size_t i = 0; i < bytes; i++)
        if (a[i] != 0x5a) {
            fprintf(stderr, "a (memset, non-blocking stream): corrupted data at byte %zu: got 0x%02x, want 0x5a (stale)\n",
                    i, a[i]);
            (*legacy_failures())++;
            break;
        }

    /* b. device-to-host copy on the null stream */
    int *b = aligned_alloc(4096, bytes);
    memset(b, 0, bytes);
    CHECK(hipHostRegister(b, bytes, 0));
    CHECK(simhipLaunchKernel(0, fill_kernel, &slow));
    CHECK(hipMemcpyAsync(b, dev, bytes, hipMemcpyDeviceToHost, 0));
    CHECK(hipHostUnregister(b));
    legacy_verify("b (copy, null stream)", b, N, 0, 42, 0);

    /* c. device-to-host copy on a blocking stream into an mmap buffer */
    int *c = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (c == MAP_FAILED)
        return 2;
    hipStream_t bs;
    CHECK(hipStreamCreate(&bs));
    CHECK(hipHostRegister(c, bytes, 0));
    CHECK(simhipLaunchKernel(bs, fill_kernel, &slow));
    CHECK(hipMemcpyAsync(c, dev, bytes, hipMemcpyDeviceToHost, bs));
    CHECK(hipHostUnregister(c));
    legacy_verify("c (copy, blocking stream, mmap)", c, N, 0, 42, 0);

    CHECK(hipDeviceSynchronize());
    CHECK(hipStreamDestroy(nb));
    CHECK(hipStreamDestroy(bs));
    CHECK(hipFree(dev));
    munmap(c, bytes);
    free(a);
    free(b);
    free(src_host);
    return legacy_finish();
}
