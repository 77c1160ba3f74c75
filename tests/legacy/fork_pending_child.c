/*
 * fork_pending_child - a child forked while a release of its parent's is
 * still pending, and which uses that memory.
 *
 * The parent registers a buffer (mapped), queues a slow kernel that writes
 * it through its device pointer on a non-blocking stream, unregisters it,
 * and forks. The child reads its copy, registers and unregisters that
 * memory again (the runtime answers as it will: its state is a copy of the
 * parent's), registers memory of its own, and exits 0. The parent's kernel
 * must land.
 *
 * Under safepin's defaults the fork first waits for the release (the
 * kernel, then the real unregister). With unregister=async and
 * drain_timeout_ms=1 the fork goes ahead with the release pending: the
 * child inherits it, and safepin must make no call of its own on it (the
 * runtime's copy may hold it registered or half-released).
 */
#include <stdlib.h>
#include <sys/wait.h>
#include "legacy.h"

#define N (64u << 10)

int main(void)
{
    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    int *buf = aligned_alloc(4096, N * sizeof(int));
    if (!buf)
        return 2;
    legacy_fill(buf, N, 0, 7);
    CHECK(hipHostRegister(buf, N * sizeof(int), hipHostRegisterMapped));
    void *dev;
    CHECK(hipHostGetDevicePointer(&dev, buf, 0));
    static struct kargs k;
    k = (struct kargs){ .dev = NULL, .n = N, .add = 5, .work_us = 300 * 1000 };
    k.dev = dev;
    CHECK(simhipLaunchKernel(s, add_kernel, &k));
    CHECK(hipHostUnregister(buf));

    fflush(NULL);
    pid_t c = fork();
    if (c < 0)
        return 2;
    if (c == 0) {
        volatile int sum = 0;
        for (size_t i = 0; i < N; i += 1024)
            sum += buf[i];
        hipError_t e = hipHostRegister(buf, N * sizeof(int), 0);
        hipError_t u = hipHostUnregister(buf);
        void *own = aligned_alloc(4096, 1 << 16);
        int ok = own && hipHostRegister(own, 1 << 16, 0) == hipSuccess &&
                 hipHostUnregister(own) == hipSuccess;
        free(own);
        printf("child: register %d, unregister %d of the inherited buffer; own memory %s\n",
               (int)e, (int)u, ok ? "works" : "FAILED");
        fflush(stdout);
        exit(ok ? 0 : 1);
    }
    int st = 0;
    if (waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "child failed (status 0x%x%s)\n", st,
                WIFSIGNALED(st) ? ", killed by a signal" : "");
        (*legacy_failures())++;
    }
    CHECK(hipStreamSynchronize(s));
    legacy_verify("after the kernel", buf, N, 0, 7, 5);
    free(buf);
    CHECK(hipStreamDestroy(s));
    return legacy_finish();
}
