/* As orphan_free, but the host function is pre-capture work of a
 * non-blocking stream that is now capturing (relaxed mode; MODE argv[1]:
 * 0 global, 1 thread-local, 2 relaxed). */
#include "legacy.h"
static int flag;
static void nop(hipStream_t st_, hipError_t e_, void *arg) { (void)st_; (void)e_; (void)arg; }
int main(int argc, char **argv)
{
    int mode = argc > 1 ? atoi(argv[1]) : 2;
    char *a = legacy_grace_block(2u << 20);
    if (!a)
        return 1;
    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    CHECK(hipStreamAddCallback(s, legacy_wait_flag, &flag, 0));
    CHECK(hipStreamBeginCapture(s, (hipStreamCaptureMode)mode));
    CHECK(hipStreamAddCallback(s, nop, NULL, 0));
    free(a); /* in its grace */
    __atomic_store_n(&flag, 1, __ATOMIC_RELEASE);
    hipGraph_t g;
    CHECK(hipStreamEndCapture(s, &g));
    CHECK(hipStreamSynchronize(s));
    printf("OK\n");
    return 0;
}
