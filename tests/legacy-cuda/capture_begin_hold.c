/*
 * capture_begin_hold.c - a program begins and ends global captures, over
 * and over, while another thread keeps the device busy (in relaxed
 * capture mode: its own calls never touch the captures) and releases of
 * earlier unregisters are pending.
 *
 * No hazard on the bare driver: every capture ends with a graph. Under
 * safepin a release is held while the device is busy (the driver's
 * unregister waits for the whole device), and the hold keeps asking
 * whether every stream is idle: a stream whose capture was beginning,
 * not yet marked capturing, must not be asked (a query of a capturing
 * stream invalidates its capture: 901 at its end).
 *
 * Slower under safepin than bare (about 3 s against 0.7 s on simcuda), by
 * doing more work: bare, each unregister's device-wide wait holds the
 * driver lock and starves the busy thread's launches (about 200-300
 * kernels in the run, so most unregisters find the device idle: p50 9 us);
 * under safepin that thread launches at full speed (about 3000 kernels),
 * and each ordered unregister waits for the kernel in flight (p50 1.04 ms),
 * as G3 asks. With unregister=async both take 0.7 s.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>

#include "legacy_cuda.h"

#define ITERS 3000
#define SLOT (64u << 10)

static CUcontext ctx;
static atomic_int stop;

static void spin(void *arg)
{
    (void)arg;
    usleep(1000);
}

static void *busy(void *arg)
{
    (void)arg;
    CHECK(cuCtxSetCurrent(ctx));
    CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;
    CHECK(cuThreadExchangeStreamCaptureMode(&m));
    CUstream x;
    CHECK(cuStreamCreate(&x, CU_STREAM_NON_BLOCKING));
    while (!atomic_load(&stop)) {
        CHECK(simcudaLaunchKernel(x, spin, NULL));
        CHECK(cuStreamSynchronize(x));
    }
    CHECK(cuStreamDestroy_v2(x));
    return NULL;
}

int main(void)
{
    ctx = lc_init();
    pthread_t t;
    if (pthread_create(&t, NULL, busy, NULL) != 0)
        return 2;
    char *buf = mmap(NULL, 16 * SLOT, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buf == MAP_FAILED)
        return 2;
    memset(buf, 1, 16 * SLOT);
    int bad = 0;
    for (int i = 0; i < ITERS; i++) {
        char *p = buf + (size_t)(i % 16) * SLOT;
        CHECK(cuMemHostRegister_v2(p, SLOT, 0));
        CHECK(cuMemHostUnregister(p));
        CUstream s;
        CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
        CHECK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
        CUgraph g = NULL;
        CUresult e = cuStreamEndCapture(s, &g);
        if (e != CUDA_SUCCESS || !g) {
            if (bad++ < 3)
                fprintf(stderr, "capture %d: cuStreamEndCapture returned %s (%d)\n", i, lc_name(e),
                        (int)e);
        }
        if (g)
            CHECK(cuGraphDestroy(g));
        CHECK(cuStreamDestroy_v2(s));
    }
    atomic_store(&stop, 1);
    pthread_join(t, NULL);
    munmap(buf, 16 * SLOT);
    if (bad) {
        fprintf(stderr, "%d of %d captures failed\n", bad, ITERS);
        return 1;
    }
    printf("OK\n");
    return 0;
}
