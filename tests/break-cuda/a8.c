/* exit() while another thread's capture never ends and a release is pending (relaxed mode, so
 * the bare unregister is allowed); also exit from inside a host function. */
#include "simcuda.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
static CUcontext ctx;
static void *cap(void *a) {
    cuCtxSetCurrent(ctx); CUstream s; cuStreamCreate(&s, (long)a);
    printf("begin=%d\n", cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_RELAXED)); fflush(stdout);
    pause(); return NULL;
}
static void hf_exit(void *u) { (void)u; printf("exit from hostfn\n"); fflush(stdout); exit(3); }
int main(int argc, char **argv) {
    CUdevice d; cuInit(0); cuDeviceGet(&d, 0); cuDevicePrimaryCtxRetain(&ctx, d); cuCtxSetCurrent(ctx);
    char *p = mmap(NULL, 1 << 20, 3, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0); memset(p, 1, 1 << 20);
    if (argc > 1 && !strcmp(argv[1], "hostfn")) {
        printf("reg=%d\n", cuMemHostRegister_v2(p, 1 << 20, 0));
        printf("unreg=%d\n", cuMemHostUnregister(p)); fflush(stdout);
        CUstream s; cuStreamCreate(&s, 0); cuLaunchHostFunc(s, hf_exit, NULL); cuStreamSynchronize(s);
        sleep(5); return 0;
    }
    pthread_t t; pthread_create(&t, NULL, cap, (void *)(long)(argc > 1)); usleep(100000);
    printf("reg=%d\n", cuMemHostRegister_v2(p, 1 << 20, 0));
    printf("unreg=%d\n", cuMemHostUnregister(p));
    printf("munmap=%d\n", munmap(p, 1 << 20)); fflush(stdout);
    exit(0);
}
