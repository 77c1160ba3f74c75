/*
 * two_devices.h - the two-device driver-API programs (two_dev_*.c): an
 * unregister on a thread where device 0's context is current while a long
 * kernel runs on device 1; meanwhile another thread launches on both
 * devices.
 *
 * A registration made while device 0's context is current
 * (CU_MEMHOSTREGISTER_PORTABLE | DEVICEMAP) is either used by the long
 * kernel on device 1 through its mapped pointer (on a blocking, a
 * non-blocking, the per-thread or the legacy stream: the kernel fills it
 * at its end), or used on device 0 only while device 1's long kernel is
 * unrelated to it (TD_UNRELATED). A worker thread unregisters it, reads the kernel's result
 * at once (CUDA's unregister waits for the device) and frees it.
 *
 * The long kernel waits for a doorbell (host memory it polls), so nothing
 * here is timed: bare, the driver's unregister waits for the whole device
 * holding the driver lock, and the other thread's launch queues behind it;
 * the program sees that (simcudaDriverLockState, as launch_stall does),
 * says "stalled: ..." and rings the doorbell itself. Otherwise it rings
 * once the other thread's work on both devices has completed.
 *
 * On simcuda the programs set SIMHIP_DEVICES=2 and re-execute themselves.
 */
#ifndef TWO_DEVICES_H
#define TWO_DEVICES_H

#include <pthread.h>
#include <stdatomic.h>

#include "legacy_cuda.h"

#define TD_N (256 * 1024) /* ints: 1 MiB */

enum td_kind { TD_BLOCKING, TD_NONBLOCKING, TD_PER_THREAD, TD_LEGACY, TD_UNRELATED };

static int *td_doorbell;
static int *td_buf;
static CUcontext td_ctx[2];
static enum td_kind td_k;
static atomic_int td_in_unregister, td_unregistered, td_launched;
static int td_failures;

struct td_fill {
    CUdeviceptr dev; /* 0: touch nothing */
    size_t n;
    int seed;
};

/* Waits for the doorbell, then fills dev (if any) with the pattern. */
static void td_doorbell_kernel(void *p)
{
    const struct td_fill *a = p;
    int v = 0;
    for (;;) {
        simcudaDeviceRead(&v, td_doorbell, sizeof v);
        if (v)
            break;
        usleep(500);
    }
    if (!a->dev)
        return;
    int tmp[1024];
    for (size_t i = 0; i < a->n; i += 1024) {
        size_t m = a->n - i < 1024 ? a->n - i : 1024;
        for (size_t j = 0; j < m; j++)
            tmp[j] = lc_pattern(i + j, a->seed);
        simcudaDeviceWrite((char *)(uintptr_t)a->dev + i * sizeof(int), tmp, m * sizeof(int));
    }
}

static void *td_unregisterer(void *arg)
{
    (void)arg;
    CHECK(cuCtxSetCurrent(td_ctx[0]));
    atomic_store(&td_in_unregister, 1);
    CHECK(cuMemHostUnregister(td_buf));
    atomic_store(&td_unregistered, 1);
    if (td_k != TD_UNRELATED && !lc_verify("right after cuMemHostUnregister", td_buf, TD_N, 61))
        td_failures++;
    free(td_buf);
    return NULL;
}

static CUstream td_own_s[2];
static CUdeviceptr td_own_d[2];

/* On each device: a stream, an allocation, a memset, waited for. */
static void *td_launcher(void *arg)
{
    (void)arg;
    for (int d = 0; d < 2; d++) {
        CHECK(cuCtxSetCurrent(td_ctx[d]));
        CHECK(cuStreamCreate(&td_own_s[d], CU_STREAM_NON_BLOCKING));
        CHECK(cuMemAlloc_v2(&td_own_d[d], 64));
        CHECK(cuMemsetD8Async(td_own_d[d], 7, 64, td_own_s[d]));
        CHECK(cuStreamSynchronize(td_own_s[d]));
    }
    atomic_store(&td_launched, 1);
    return NULL;
}

static int td_run(char **argv, enum td_kind kind)
{
    if (!getenv("SIMHIP_DEVICES")) {
        setenv("SIMHIP_DEVICES", "2", 1);
        execv("/proc/self/exe", argv);
        return 2;
    }
    td_k = kind;
    td_ctx[0] = lc_init();
    int n = 0;
    CHECK(cuDeviceGetCount(&n));
    if (n < 2) {
        fprintf(stderr, "needs two GPUs: %d device(s)\n", n);
        return 2;
    }
    CUdevice dev1;
    CHECK(cuDeviceGet(&dev1, 1));
    CHECK(cuDevicePrimaryCtxRetain(&td_ctx[1], dev1));

    CHECK(cuMemHostAlloc((void **)&td_doorbell, sizeof(int), CU_MEMHOSTALLOC_PORTABLE));
    __atomic_store_n(td_doorbell, 0, __ATOMIC_RELEASE);
    size_t bytes = TD_N * sizeof(int);
    td_buf = aligned_alloc(4096, bytes);
    if (!td_buf)
        return 2;
    memset(td_buf, 0, bytes);
    CHECK(cuMemHostRegister_v2(td_buf, bytes,
                               CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP));
    static struct td_fill fill = { .n = TD_N, .seed = 61 };
    CUstream s0 = NULL;
    CUdeviceptr d0 = 0;
    if (kind == TD_UNRELATED) {
        /* Used on device 0, and done with. */
        for (size_t i = 0; i < TD_N; i++)
            td_buf[i] = lc_pattern(i, 61);
        CHECK(cuStreamCreate(&s0, CU_STREAM_NON_BLOCKING));
        CHECK(cuMemAlloc_v2(&d0, bytes));
        CHECK(cuMemcpyHtoDAsync_v2(d0, td_buf, bytes, s0));
        CHECK(cuStreamSynchronize(s0));
    } else {
        CHECK(cuMemHostGetDevicePointer_v2(&fill.dev, td_buf, 0));
    }

    CHECK(cuCtxSetCurrent(td_ctx[1]));
    CUstream s1 = kind == TD_LEGACY ? CU_STREAM_LEGACY : CU_STREAM_PER_THREAD;
    if (kind == TD_BLOCKING)
        CHECK(cuStreamCreate(&s1, CU_STREAM_DEFAULT));
    else if (kind != TD_PER_THREAD && kind != TD_LEGACY)
        CHECK(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
    CHECK(simcudaLaunchKernel(s1, td_doorbell_kernel, &fill));
    CHECK(cuCtxSetCurrent(td_ctx[0]));

    pthread_t u, l;
    pthread_create(&u, NULL, td_unregisterer, NULL);
    while (!atomic_load(&td_in_unregister))
        usleep(1000);
    /* Give the unregister its chance to take the driver lock (bare, it does
     * at once; under safepin it never does while the device is busy). */
    int held = 0, waiting = 0;
    for (int i = 0; i < 1000 && !held && !atomic_load(&td_unregistered); i++) {
        simcudaDriverLockState(&held, &waiting);
        usleep(1000);
    }
    pthread_create(&l, NULL, td_launcher, NULL);
    int stalled = 0;
    for (int i = 0; i < 3000 && !atomic_load(&td_launched); i++) {
        simcudaDriverLockState(&held, &waiting);
        if (held == 1 && waiting > 0) {
            stalled = 1;
            break;
        }
        usleep(1000);
    }
    if (stalled)
        fprintf(stderr, "stalled: another thread's launch waits for the driver lock held by "
                        "cuMemHostUnregister on device 0's thread (behind device 1's kernel); "
                        "ringing the doorbell\n");
    else if (!atomic_load(&td_launched))
        fprintf(stderr, "the other thread's work on devices 0 and 1 did not complete within "
                        "3 s\n");
    __atomic_store_n(td_doorbell, 1, __ATOMIC_RELEASE);
    pthread_join(l, NULL);
    pthread_join(u, NULL);

    CHECK(cuCtxSetCurrent(td_ctx[1]));
    CHECK(cuStreamSynchronize(s1));
    if (kind != TD_PER_THREAD && kind != TD_LEGACY)
        CHECK(cuStreamDestroy_v2(s1));
    for (int d = 0; d < 2; d++) {
        CHECK(cuCtxSetCurrent(td_ctx[d]));
        CHECK(cuStreamDestroy_v2(td_own_s[d]));
        CHECK(cuMemFree_v2(td_own_d[d]));
    }
    CHECK(cuCtxSetCurrent(td_ctx[0]));
    if (s0) {
        CHECK(cuStreamDestroy_v2(s0));
        CHECK(cuMemFree_v2(d0));
    }
    CHECK(cuMemFreeHost(td_doorbell));
    if (stalled || !atomic_load(&td_launched) || td_failures)
        return 1;
    printf("OK\n");
    return 0;
}

#endif
