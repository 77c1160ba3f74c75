/* The release hold: a device never idle (another thread keeps enqueuing short kernels),
 * the main thread registers, unregisters, then munmaps/frees/exits. Must not hang. */
#include "simcuda.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
static volatile int stop;
static CUcontext ctx;
static void k(void *a) { (void)a; usleep(500); }
static void *busy(void *a) {
    (void)a; cuCtxSetCurrent(ctx); CUstream s; cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
    /* Bounded queue (about 4 kernels ahead), never idle. */
    CUevent ev[4]; for (int i = 0; i < 4; i++) cuEventCreate(&ev[i], 0);
    for (unsigned i = 0; !stop; i++) { cuEventSynchronize(ev[i % 4]); simcudaLaunchKernel(s, k, NULL); cuEventRecord(ev[i % 4], s); }
    cuStreamSynchronize(s); return NULL;
}
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "munmap";
    CUdevice d; cuInit(0); cuDeviceGet(&d, 0); cuDevicePrimaryCtxRetain(&ctx, d); cuCtxSetCurrent(ctx);
    pthread_t t; pthread_create(&t, NULL, busy, NULL);
    usleep(20000);
    double t0 = now(); int bad = 0;
    size_t n = 1 << 20;
    for (int i = 0; i < 20; i++) {
        if (!strcmp(mode, "munmap") || !strcmp(mode, "exit") || !strcmp(mode, "_exit")) {
            char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            memset(p, i, n);
            if (cuMemHostRegister_v2(p, n, 0)) bad++;
            if (cuMemHostUnregister(p)) bad++;
            if (strcmp(mode, "munmap") == 0) munmap(p, n);
        } else if (!strcmp(mode, "free")) {
            char *p = malloc(n); memset(p, i, n);
            if (cuMemHostRegister_v2(p, n, 0)) bad++;
            if (cuMemHostUnregister(p)) bad++;
            free(p);
        } else if (!strcmp(mode, "rereg")) {
            static char *p; if (!p) { p = mmap(NULL, n, 3, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0); memset(p, 1, n); }
            if (cuMemHostRegister_v2(p + (i % 2) * 4096, n - 8192, 0)) bad++;
            if (cuMemHostUnregister(p + (i % 2) * 4096)) bad++;
        }
    }
    printf("loop bad=%d\n", bad);
    fprintf(stderr, "loop %.3fs\n", now() - t0);
    if (!strcmp(mode, "exit")) exit(0);
    if (!strcmp(mode, "_exit")) _exit(0);
    stop = 1; pthread_join(t, NULL);
    printf("done\n");
    return 0;
}
