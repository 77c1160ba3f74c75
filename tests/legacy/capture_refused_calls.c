/*
 * capture_refused_calls - capture calls the runtime refuses, while earlier
 * work on the capturing stream still uses a registered buffer.
 *
 * A non-blocking stream runs a slow kernel on a mapped buffer, then begins
 * a capture (relaxed mode). A second hipStreamBeginCapture and an
 * hipStreamEndCapture without a graph pointer are refused: the capture
 * stays open. The buffer is unregistered, the capture ended properly, and
 * only then does the host wait for the stream. ROCm 5.2-5.5 unregister
 * finishes only the null stream: the kernel touches unpinned memory.
 */
#include "legacy.h"

#define N (64 * 1024)

int main(void)
{
    size_t bytes = N * sizeof(int);
    int *buf = aligned_alloc(4096, bytes);
    if (!buf)
        return 2;
    legacy_fill(buf, N, 0, 3);
    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    CHECK(hipHostRegister(buf, bytes, hipHostRegisterMapped));
    int *dbuf;
    CHECK(hipHostGetDevicePointer((void **)&dbuf, buf, 0));
    static struct kargs k;
    k = (struct kargs){ .dev = dbuf, .n = N, .add = 4, .work_us = 80000 };
    CHECK(simhipLaunchKernel(s, add_kernel, &k));

    CHECK(hipStreamBeginCapture(s, hipStreamCaptureModeRelaxed));
    if (hipStreamBeginCapture(s, hipStreamCaptureModeRelaxed) == hipSuccess) {
        fprintf(stderr, "a second hipStreamBeginCapture was accepted\n");
        (*legacy_failures())++;
    }
    if (hipStreamEndCapture(s, NULL) == hipSuccess) {
        fprintf(stderr, "hipStreamEndCapture(s, NULL) was accepted\n");
        (*legacy_failures())++;
    }
    CHECK(hipHostUnregister(buf));
    usleep(20000); /* other host work before the capture ends */
    hipGraph_t g;
    CHECK(hipStreamEndCapture(s, &g));
    CHECK(hipGraphDestroy(g));
    CHECK(hipStreamSynchronize(s));
    legacy_verify("buf", buf, N, 0, 3, 4);
    CHECK(hipStreamDestroy(s));
    free(buf);
    return legacy_finish();
}
