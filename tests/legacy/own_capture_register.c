/*
 * own_capture_register - a thread that captures (relaxed mode) unregisters
 * a buffer and registers it again, larger, before it ends its capture.
 *
 * In relaxed mode registration calls are allowed during a capture, and the
 * runtime answers them at once; the program then captures a kernel on the
 * new registration, ends the capture, replays the graph and checks it.
 */
#include "legacy.h"

#define N (64 * 1024)

int main(void)
{
    size_t small = N * sizeof(int), big = 4 * small;
    int *buf = aligned_alloc(4096, big);
    if (!buf)
        return 2;
    legacy_fill(buf, 4 * N, 0, 8);
    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    hipStreamCaptureMode mode = hipStreamCaptureModeRelaxed;
    CHECK(hipThreadExchangeStreamCaptureMode(&mode));

    CHECK(hipHostRegister(buf, small, hipHostRegisterMapped));
    CHECK(hipStreamBeginCapture(s, hipStreamCaptureModeRelaxed));
    CHECK(hipHostUnregister(buf));
    CHECK(hipHostRegister(buf, big, hipHostRegisterMapped)); /* over the old range */
    int *dbuf;
    CHECK(hipHostGetDevicePointer((void **)&dbuf, buf, 0));
    static struct kargs k;
    k = (struct kargs){ .dev = dbuf, .n = 4 * N, .add = 1 };
    CHECK(simhipLaunchKernel(s, add_kernel, &k));
    hipGraph_t g;
    CHECK(hipStreamEndCapture(s, &g));
    hipGraphExec_t ge;
    CHECK(hipGraphInstantiate(&ge, g, NULL, NULL, 0));
    CHECK(hipGraphLaunch(ge, s));
    CHECK(hipStreamSynchronize(s));
    legacy_verify("buf", buf, 4 * N, 0, 8, 1);
    CHECK(hipGraphExecDestroy(ge));
    CHECK(hipGraphDestroy(g));
    CHECK(hipHostUnregister(buf));
    CHECK(hipStreamDestroy(s));
    free(buf);
    return legacy_finish();
}
