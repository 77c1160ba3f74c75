/*
 * capture_unregister.c - one thread records a CUDA graph (global capture
 * mode, the default of cuStreamBeginCapture) while another thread, done
 * with its staging buffer, unpins it.
 *
 * During a global capture CUDA refuses the unregister with 900 and
 * invalidates the other thread's capture: its cuStreamEndCapture returns
 * 901 (CUDA_ERROR_STREAM_CAPTURE_INVALIDATED) and the graph is lost. (Work
 * still runs on the legacy stream meanwhile: a release marker recorded
 * there would invalidate the capture as well, 906.)
 */
#include <pthread.h>
#include <stdatomic.h>

#include "legacy_cuda.h"

#define N 4096

static CUcontext ctx;
static atomic_int capturing, unpinned;
static CUdeviceptr dev;

static void slow_kernel(void *arg)
{
    (void)arg;
    usleep(300 * 1000);
}

static void *recorder(void *arg)
{
    CUresult *end = arg;
    CHECK(cuCtxSetCurrent(ctx));
    CUstream s;
    CHECK(cuStreamCreate(&s, CU_STREAM_DEFAULT));
    CHECK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CHECK(cuMemsetD8Async(dev, 1, N, s));
    atomic_store(&capturing, 1);
    while (!atomic_load(&unpinned))
        usleep(1000);
    CUgraph g = NULL;
    *end = cuStreamEndCapture(s, &g);
    if (*end == CUDA_SUCCESS) {
        CUgraphExec ge;
        CHECK(cuGraphInstantiateWithFlags(&ge, g, 0));
        CHECK(cuGraphLaunch(ge, s));
        CHECK(cuStreamSynchronize(s));
        CHECK(cuGraphExecDestroy(ge));
        CHECK(cuGraphDestroy(g));
    }
    CHECK(cuStreamDestroy_v2(s));
    return NULL;
}

int main(void)
{
    ctx = lc_init();
    static int staging[N];
    CUstream s;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CHECK(cuMemAlloc_v2(&dev, sizeof staging));
    CHECK(cuMemHostRegister_v2(staging, sizeof staging, 0));
    CHECK(cuMemcpyHtoDAsync_v2(dev, staging, sizeof staging, s));
    CHECK(cuStreamSynchronize(s));

    /* Earlier work still running on the legacy stream (a ring of batches). */
    CHECK(simcudaLaunchKernel(CU_STREAM_LEGACY, slow_kernel, NULL));
    CUresult end = CUDA_SUCCESS;
    pthread_t t;
    pthread_create(&t, NULL, recorder, &end);
    while (!atomic_load(&capturing))
        usleep(1000);
    CUresult u = cuMemHostUnregister(staging);
    atomic_store(&unpinned, 1);
    pthread_join(t, NULL);
    if (u != CUDA_SUCCESS)
        fprintf(stderr, "cuMemHostUnregister during the other thread's capture returned %s (%d)\n",
                lc_name(u), (int)u);
    if (end != CUDA_SUCCESS)
        fprintf(stderr, "cuStreamEndCapture returned %s (%d): the graph is lost\n", lc_name(end),
                (int)end);
    if (u == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
        cuMemHostUnregister(staging); /* still registered: the program tidies up */
    CHECK(cuMemFree_v2(dev));
    CHECK(cuStreamDestroy_v2(s));
    if (u != CUDA_SUCCESS || end != CUDA_SUCCESS)
        return 1;
    printf("OK\n");
    return 0;
}
