/* As orphan_free, but the host function is pre-capture work of a
 * non-blocking stream that is now capturing (relaxed mode; MODE argv[1]:
 * 0 global, 1 thread-local, 2 relaxed). */
#include "legacy.h"
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
static atomic_int flag;
static void wait_flag(hipStream_t st_, hipError_t e_, void *arg) { (void)st_; (void)e_; (void)arg; while (!atomic_load(&flag)) usleep(100); }
static void nop(hipStream_t st_, hipError_t e_, void *arg) { (void)st_; (void)e_; (void)arg; }
int main(int argc, char **argv)
{
    int mode = argc > 1 ? atoi(argv[1]) : 2;
    size_t n = 2u << 20;
    char *a = malloc(n);
    memset(a, 1, n);
    CHECK(hipHostRegister(a, n, 0));
    CHECK(hipHostUnregister(a));
    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    CHECK(hipStreamAddCallback(s, wait_flag, NULL, 0));
    CHECK(hipStreamBeginCapture(s, (hipStreamCaptureMode)mode));
    CHECK(hipStreamAddCallback(s, nop, NULL, 0));
    free(a); /* in its grace */
    atomic_store(&flag, 1);
    hipGraph_t g;
    CHECK(hipStreamEndCapture(s, &g));
    CHECK(hipStreamSynchronize(s));
    printf("OK\n");
    return 0;
}
