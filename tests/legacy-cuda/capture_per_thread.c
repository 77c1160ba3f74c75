/*
 * capture_per_thread.c - two threads each capture their own per-thread
 * default stream, named as the _ptsz entry points name it (a NULL stream:
 * what code built with per-thread default streams calls).
 *
 * A captures (thread-local mode) and ends its capture; B captures (global)
 * meanwhile. The main thread, in thread-local mode (it ignores other
 * threads' captures), unpins a buffer: the driver answers success and B's
 * capture ends with a graph. Neither capture may be touched by a release
 * marker: the two NULL streams are two streams, not the legacy one.
 */
#include <pthread.h>
#include <stdatomic.h>
#include "legacy_cuda.h"

#define N (64 * 1024)
static CUcontext ctx;
static char *buf;
static atomic_int step;
static CUresult a_end = CUDA_ERROR_UNKNOWN, b_end = CUDA_ERROR_UNKNOWN;

static void wait_step(int s)
{
    while (atomic_load(&step) < s)
        usleep(500);
}

static void *thread_a(void *arg)
{
    (void)arg;
    cuCtxSetCurrent(ctx);
    CHECK(cuStreamBeginCapture_v2_ptsz(NULL, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    atomic_store(&step, 1);
    wait_step(2);
    CUgraph g = NULL;
    a_end = cuStreamEndCapture_ptsz(NULL, &g);
    if (g)
        cuGraphDestroy(g);
    atomic_store(&step, 3);
    return NULL;
}

static void *thread_b(void *arg)
{
    (void)arg;
    cuCtxSetCurrent(ctx);
    wait_step(1);
    CHECK(cuStreamBeginCapture_v2_ptsz(NULL, CU_STREAM_CAPTURE_MODE_GLOBAL));
    atomic_store(&step, 2);
    wait_step(4);
    CUgraph g = NULL;
    b_end = cuStreamEndCapture_ptsz(NULL, &g);
    if (g)
        cuGraphDestroy(g);
    else if (b_end == CUDA_SUCCESS)
        b_end = CUDA_ERROR_UNKNOWN;
    return NULL;
}

int main(void)
{
    ctx = lc_init();
    buf = aligned_alloc(4096, N);
    if (!buf)
        return 2;
    memset(buf, 1, N);
    CHECK(cuMemHostRegister_v2(buf, N, 0));
    pthread_t a, b;
    pthread_create(&a, NULL, thread_a, NULL);
    pthread_create(&b, NULL, thread_b, NULL);
    wait_step(3);
    CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
    CHECK(cuThreadExchangeStreamCaptureMode(&m));
    CUresult u = cuMemHostUnregister(buf);
    atomic_store(&step, 4);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    int bad = 0;
    if (u != CUDA_SUCCESS) {
        printf("cuMemHostUnregister returned %s (%d) in thread-local mode\n", lc_name(u), (int)u);
        bad++;
    }
    if (a_end != CUDA_SUCCESS || b_end != CUDA_SUCCESS) {
        printf("capture ends: A %s (%d), B %s (%d): a capture was invalidated\n", lc_name(a_end),
               (int)a_end, lc_name(b_end), (int)b_end);
        bad++;
    }
    free(buf);
    if (bad) {
        printf("FAILED\n");
        return 1;
    }
    printf("OK\n");
    return 0;
}
