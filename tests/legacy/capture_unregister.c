/*
 * capture_unregister - hipHostUnregister while another thread captures a
 * graph in global mode.
 *
 * A solver thread captures its step (two kernels on a pinned output buffer)
 * into a graph, the usual way (hipStreamCaptureModeGlobal). Meanwhile the
 * main thread finishes with a staging buffer (a copy kernel still runs on it
 * on another stream) and unpins it. The runtime refuses the unregister
 * (hipErrorStreamCaptureUnsupported) and, since ROCm 6.2, also invalidates
 * the other thread's capture (hipErrorStreamCaptureInvalidated at
 * hipStreamEndCapture): no graph.
 */
#include <pthread.h>
#include "legacy.h"

#define N (16 * 1024)
#define REPLAYS 3

static int *out, *stage;
static hipStream_t capture_stream;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int capturing, unregistered;
static hipError_t end_err;
static hipGraph_t graph;

static void *solver(void *arg)
{
    (void)arg;
    static struct kargs a1, a2;
    int *dout;
    CHECK(hipHostGetDevicePointer((void **)&dout, out, 0));
    CHECK(hipStreamBeginCapture(capture_stream, hipStreamCaptureModeGlobal));
    a1 = (struct kargs){ .dev = dout, .n = N, .add = 1 };
    a2 = (struct kargs){ .dev = dout, .n = N, .add = 2 };
    CHECK(simhipLaunchKernel(capture_stream, add_kernel, &a1));
    CHECK(simhipLaunchKernel(capture_stream, add_kernel, &a2));

    pthread_mutex_lock(&lock);
    capturing = 1;
    pthread_cond_broadcast(&cond);
    while (!unregistered)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);

    end_err = hipStreamEndCapture(capture_stream, &graph);
    return NULL;
}

int main(void)
{
    out = aligned_alloc(4096, N * sizeof(int));
    stage = aligned_alloc(4096, N * sizeof(int));
    if (!out || !stage)
        return 2;
    legacy_fill(out, N, 0, 5);

    hipStream_t copy_stream;
    CHECK(hipStreamCreate(&capture_stream));
    CHECK(hipStreamCreateWithFlags(&copy_stream, hipStreamNonBlocking));
    CHECK(hipHostRegister(out, N * sizeof(int), hipHostRegisterMapped));
    CHECK(hipHostRegister(stage, N * sizeof(int), hipHostRegisterMapped));

    /* the staging buffer's last copy is still running when it is unpinned */
    static struct kargs sargs;
    int *dstage;
    CHECK(hipHostGetDevicePointer((void **)&dstage, stage, 0));
    sargs = (struct kargs){ .dev = dstage, .n = N, .seed = 6, .work_us = 20000 };
    CHECK(simhipLaunchKernel(copy_stream, fill_kernel, &sargs));

    pthread_t t;
    pthread_create(&t, NULL, solver, NULL);
    pthread_mutex_lock(&lock);
    while (!capturing)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);

    EXPECT_ERR(hipHostUnregister(stage), hipSuccess);

    pthread_mutex_lock(&lock);
    unregistered = 1;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    pthread_join(t, NULL);

    CHECK(hipStreamSynchronize(copy_stream));
    legacy_verify("stage", stage, N, 0, 6, 0);

    if (end_err != hipSuccess) {
        fprintf(stderr, "hipStreamEndCapture failed: %s (%d)\n", hipGetErrorName(end_err),
                (int)end_err);
        return legacy_finish();
    }
    hipGraphExec_t exec;
    CHECK(hipGraphInstantiate(&exec, graph, NULL, NULL, 0));
    for (int r = 0; r < REPLAYS; r++)
        CHECK(hipGraphLaunch(exec, capture_stream));
    CHECK(hipStreamSynchronize(capture_stream));
    legacy_verify("out", out, N, 0, 5, 3 * REPLAYS);

    CHECK(hipGraphExecDestroy(exec));
    CHECK(hipGraphDestroy(graph));
    CHECK(hipHostUnregister(out));
    CHECK(hipStreamDestroy(copy_stream));
    CHECK(hipStreamDestroy(capture_stream));
    free(out);
    free(stage);
    return legacy_finish();
}
