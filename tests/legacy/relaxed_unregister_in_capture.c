/*
 * relaxed_unregister_in_capture - a worker thread in relaxed capture mode
 * (as a program must put the threads that keep working while another one
 * captures globally) unregisters a buffer that a kernel still writes, while
 * the main thread captures a graph in global mode.
 *
 * Relaxed mode makes the unregister legal during the capture, and the
 * runtime's unregister waits for the kernel: the program works bare. Under
 * safepin the unregister waits for that work with event queries of its own;
 * they must run in relaxed mode too, or (from ROCm 7.0, which refuses
 * hipEventQuery during another thread's global capture: the rocm7
 * personality) they invalidate the main thread's capture.
 */
#include <pthread.h>
#include "legacy.h"

#define N (16 * 1024)

static int *buf, *out;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int capturing, worker_done;

static void *worker(void *arg)
{
    (void)arg;
    static struct kargs args;
    hipStreamCaptureMode mode = hipStreamCaptureModeRelaxed;
    CHECK(hipThreadExchangeStreamCaptureMode(&mode));
    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    pthread_mutex_lock(&lock);
    while (!capturing)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
    int *d;
    CHECK(hipHostGetDevicePointer((void **)&d, buf, 0));
    args = (struct kargs){ .dev = d, .n = N, .seed = 4, .work_us = 100000 };
    CHECK(simhipLaunchKernel(s, fill_kernel, &args));
    CHECK(hipHostUnregister(buf)); /* waits for the kernel */
    legacy_verify("worker buffer", buf, N, 0, 4, 0);
    CHECK(hipStreamDestroy(s));
    pthread_mutex_lock(&lock);
    worker_done = 1;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    return NULL;
}

int main(void)
{
    buf = aligned_alloc(4096, N * sizeof(int));
    out = aligned_alloc(4096, N * sizeof(int));
    if (!buf || !out)
        return 2;
    memset(buf, 0, N * sizeof(int));
    legacy_fill(out, N, 0, 1);
    CHECK(hipHostRegister(buf, N * sizeof(int), hipHostRegisterMapped));
    CHECK(hipHostRegister(out, N * sizeof(int), hipHostRegisterMapped));
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);

    hipStream_t cs;
    CHECK(hipStreamCreateWithFlags(&cs, hipStreamNonBlocking));
    CHECK(hipStreamBeginCapture(cs, hipStreamCaptureModeGlobal));
    static struct kargs add;
    int *dout;
    CHECK(hipHostGetDevicePointer((void **)&dout, out, 0));
    add = (struct kargs){ .dev = dout, .n = N, .add = 1 };
    CHECK(simhipLaunchKernel(cs, add_kernel, &add));
    pthread_mutex_lock(&lock);
    capturing = 1;
    pthread_cond_broadcast(&cond);
    while (!worker_done)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
    hipGraph_t g = NULL;
    CHECK(hipStreamEndCapture(cs, &g));
    hipGraphExec_t x;
    CHECK(hipGraphInstantiate(&x, g, NULL, NULL, 0));
    CHECK(hipGraphLaunch(x, cs));
    CHECK(hipStreamSynchronize(cs));
    legacy_verify("graph output", out, N, 0, 1, 1);
    pthread_join(t, NULL);
    CHECK(hipGraphExecDestroy(x));
    CHECK(hipGraphDestroy(g));
    CHECK(hipStreamDestroy(cs));
    CHECK(hipHostUnregister(out));
    free(buf);
    free(out);
    return legacy_finish();
}
