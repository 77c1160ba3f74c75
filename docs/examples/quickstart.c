/* quickstart.c - the quick start's example (README.md, "Quick start"): a
 * HIP program with a classic bug. It registers a buffer, copies it to the
 * device on a stream of its own, and frees it without unregistering it:
 * the runtime keeps a stale registration of memory the allocator hands out
 * again. Host code only, so it builds with gcc against Debian's
 * libamdhip64-dev and runs on simhip (scripts/safepin --sim).
 *
 *   cc -g -D__HIP_PLATFORM_AMD__ quickstart.c -o quickstart -lamdhip64
 */
#include <hip/hip_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                          \
    do {                                                                     \
        hipError_t e_ = (call);                                              \
        if (e_ != hipSuccess) {                                              \
            fprintf(stderr, "%s: %s\n", #call, hipGetErrorName(e_));         \
            return 1;                                                        \
        }                                                                    \
    } while (0)

int main(void)
{
    size_t n = 1 << 20;
    char *buf = malloc(n);
    void *dev;
    hipStream_t stream;
    if (!buf)
        return 1;
    memset(buf, 7, n);
    CHECK(hipStreamCreateWithFlags(&stream, hipStreamNonBlocking));
    CHECK(hipMalloc(&dev, n));
    CHECK(hipHostRegister(buf, n, hipHostRegisterDefault));
    CHECK(hipMemcpyAsync(dev, buf, n, hipMemcpyHostToDevice, stream));
    CHECK(hipStreamSynchronize(stream));
    free(buf); /* the bug: hipHostUnregister(buf) is missing */
    CHECK(hipFree(dev));
    CHECK(hipStreamDestroy(stream));
    puts("done");
    return 0;
}
