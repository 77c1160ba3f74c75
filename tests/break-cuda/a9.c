/* RLIMIT_MEMLOCK: a program pins one buffer at a time, within its limit. Held releases keep
 * the previous buffer pinned; the next register must still succeed. Device kept busy. */
#include "simcuda.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>
static volatile int stop; static CUcontext ctx;
static void k(void *a) { (void)a; usleep(500); }
static void *busy(void *a) {
    (void)a; cuCtxSetCurrent(ctx); CUstream s; cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
    CUevent ev[4]; for (int i = 0; i < 4; i++) cuEventCreate(&ev[i], 0);
    for (unsigned i = 0; !stop; i++) { cuEventSynchronize(ev[i % 4]); simcudaLaunchKernel(s, k, NULL); cuEventRecord(ev[i % 4], s); }
    cuStreamSynchronize(s); return NULL;
}
int main(int argc, char **argv) {
    struct rlimit rl = {4 << 20, 4 << 20}; setrlimit(RLIMIT_MEMLOCK, &rl);
    CUdevice d; cuInit(0); cuDeviceGet(&d, 0); cuDevicePrimaryCtxRetain(&ctx, d); cuCtxSetCurrent(ctx);
    pthread_t t; if (argc > 1) pthread_create(&t, NULL, busy, NULL);
    usleep(10000);
    size_t n = (argc > 2 ? 5u : 3u) << 20; int bad = 0;
    for (int i = 0; i < 10; i++) {
        char *p = mmap(NULL, n, 3, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0); memset(p, i, n);
        CUresult e = cuMemHostRegister_v2(p, n, 0);
        CUresult u = cuMemHostUnregister(p);
        printf("iter %d reg=%d unreg=%d\n", i, e, u); if (e) bad++;
    }
    stop = 1; if (argc > 1) pthread_join(t, NULL);
    printf("bad=%d\n", bad);
    return 0;
}
