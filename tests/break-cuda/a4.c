/* Captures: register/unregister/free/attr from the capturing thread and from another thread,
 * in each mode; then fork with registered and pending ranges. */
#include "simcuda.h"
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#define P(n, e) printf("%s=%d\n", n, (int)(e))
static CUcontext ctx; static void *buf; static const char *op;
static CUresult do_op(void) {
    unsigned t;
    if (!strcmp(op, "reg")) return cuMemHostRegister_v2(buf, 4096, 0);
    if (!strcmp(op, "unreg")) return cuMemHostUnregister(buf);
    if (!strcmp(op, "attr")) return cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)buf);
    if (!strcmp(op, "sdestroy")) { CUstream s; cuStreamCreate(&s, 1); return cuStreamDestroy_v2(s); }
    if (!strcmp(op, "sdestroy_blk")) { CUstream s; cuStreamCreate(&s, 0); return cuStreamDestroy_v2(s); }
    if (!strcmp(op, "free")) { CUdeviceptr d; cuMemAlloc_v2(&d, 64); return cuMemFree_v2(d); }
    return -1;
}
static void *other(void *a) { (void)a; cuCtxSetCurrent(ctx); return (void *)(long)do_op(); }
int main(int argc, char **argv) {
    CUdevice d; cuInit(0); cuDeviceGet(&d, 0); cuDevicePrimaryCtxRetain(&ctx, d); cuCtxSetCurrent(ctx);
    buf = mmap(NULL, 4096, 3, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0); memset(buf, 1, 4096);
    const char *ops[] = {"reg", "unreg", "attr", "sdestroy", "sdestroy_blk", "free"};
    for (int mode = 0; mode < 3; mode++)
        for (int where = 0; where < 2; where++)
            for (int i = 0; i < 6; i++) {
                op = ops[i];
                int pre = !strcmp(op, "unreg") || !strcmp(op, "attr");
                if (pre) cuMemHostRegister_v2(buf, 4096, 0);
                CUstream s; cuStreamCreate(&s, argc > 1 ? 0 : CU_STREAM_NON_BLOCKING);
                CUresult b = cuStreamBeginCapture_v2(s, mode);
                CUresult e;
                if (where == 0) e = do_op();
                else { pthread_t t; void *r; pthread_create(&t, NULL, other, NULL); pthread_join(t, &r); e = (CUresult)(long)r; }
                CUstreamCaptureStatus st = 9; cuStreamIsCapturing(s, &st);
                CUgraph g = NULL; CUresult en = cuStreamEndCapture(s, &g);
                printf("mode%d %s %s: begin=%d op=%d status=%d end=%d graph=%d\n", mode, where ? "other" : "own", op, b, e, st, en, g != NULL);
                if (g) cuGraphDestroy(g);
                cuStreamDestroy_v2(s);
                if (!strcmp(op, "reg")) cuMemHostUnregister(buf);
                cuCtxSynchronize();
            }
    /* fork with a live and a pending registration */
    void *b2 = mmap(NULL, 8192, 3, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0); memset(b2, 2, 8192);
    P("reg_b2", cuMemHostRegister_v2(b2, 4096, 0));
    P("reg_b3", cuMemHostRegister_v2((char *)b2 + 4096, 4096, 0));
    P("unreg_b3", cuMemHostUnregister((char *)b2 + 4096));
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        printf("child unreg_b2=%d\n", cuMemHostUnregister(b2));
        printf("child munmap=%d\n", munmap(b2, 8192));
        fflush(stdout); _exit(7);
    }
    int ws; waitpid(pid, &ws, 0); printf("child exit=%d\n", WEXITSTATUS(ws));
    P("unreg_b2", cuMemHostUnregister(b2));
    P("munmap", munmap(b2, 8192));
    return 0;
}
