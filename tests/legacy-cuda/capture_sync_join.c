/*
 * capture_sync_join.c - the main thread captures a graph (global mode) on a
 * blocking stream and, still capturing, joins a worker that unpins a buffer
 * in thread-local mode (it ignores other threads' captures: the driver
 * answers success at once). Run under safepin with unregister=sync: the
 * release cannot be made while the capture holds its marker back, and the
 * capture ends only after the worker returns; the unregister must return
 * (as an ordered one does, G3), never wait for that capture.
 */
#include <pthread.h>
#include "legacy_cuda.h"

#define N (64 * 1024)
static char *buf;
static CUcontext ctx;
static CUresult unreg = CUDA_ERROR_UNKNOWN;

static void *worker(void *a)
{
    (void)a;
    cuCtxSetCurrent(ctx);
    CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
    cuThreadExchangeStreamCaptureMode(&m);
    unreg = cuMemHostUnregister(buf);
    return NULL;
}

int main(void)
{
    ctx = lc_init();
    buf = aligned_alloc(4096, N);
    if (!buf)
        return 2;
    memset(buf, 1, N);
    CUstream s;
    CHECK(cuStreamCreate(&s, CU_STREAM_DEFAULT));
    CHECK(cuMemHostRegister_v2(buf, N, 0));
    CHECK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    CUgraph g = NULL;
    CUresult e = cuStreamEndCapture(s, &g);
    if (g)
        cuGraphDestroy(g);
    CHECK(cuStreamDestroy(s));
    free(buf);
    if (unreg != CUDA_SUCCESS || e != CUDA_SUCCESS || !g) {
        printf("unregister %d, capture end %d, graph %s\nFAILED\n", (int)unreg, (int)e, g ? "yes" : "no");
        return 1;
    }
    printf("OK\n");
    return 0;
}
