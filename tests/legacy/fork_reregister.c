/*
 * fork_reregister - a child that registers again the memory its parent
 * registered, one buffer of it unregistered by the parent just before the
 * fork.
 *
 * The parent registers two 4 MiB heap buffers (mapped), queues a device
 * memset on each through its device pointer on a non-blocking stream,
 * unregisters the second while its memset is still queued, and forks. The
 * child churns the allocator, registers and unregisters buffers of its own,
 * then registers and unregisters each inherited buffer once, and exits. HIP
 * errors in the child are its runtime's business; the child must exit 0.
 * The parent's memsets must land.
 *
 * On ROCm 5.2-5.5 the unregister waits for the null stream only, so the
 * queued memset meets unregistered memory (a fault): safepin's release waits
 * for it. Under safepin nothing the child does may trip the runtime: the
 * child's copy of the runtime holds whatever state the parent's had at the
 * fork, so safepin completes the pending release before the fork (the
 * child inherits what a bare run leaves) and makes no call of its own on
 * the inherited memory (a pointer-attribute probe there met the parent's
 * half-done unregister: "hipPointerGetAttributes raced hipHostUnregister").
 */
#include <stdlib.h>
#include <sys/wait.h>
#include "legacy.h"

#define LEN (4u << 20)
#define OWN (64u << 10)

static void child(unsigned char *inherited[2])
{
    for (int i = 0; i < 100000; i++) {
        void *q = malloc((size_t)(i % 17) * 97 + (i % 5 == 0 ? 200000 : 16));
        if (!q)
            _exit(3);
        ((volatile char *)q)[0] = 1;
        free(q);
    }
    for (int i = 0; i < 100; i++) {
        void *q = aligned_alloc(4096, OWN);
        if (!q)
            _exit(3);
        memset(q, i, OWN);
        hipError_t e = hipHostRegister(q, OWN, 0);
        if (e == hipSuccess && hipHostUnregister(q) != hipSuccess) {
            fprintf(stderr, "child: unregister of its own buffer failed\n");
            _exit(4);
        }
        free(q);
    }
    for (int i = 0; i < 2; i++) {
        hipError_t e = hipHostRegister(inherited[i], LEN, hipHostRegisterMapped);
        hipError_t u = hipHostUnregister(inherited[i]);
        printf("child: inherited buffer %d: register %d, unregister %d\n", i, (int)e, (int)u);
    }
    fflush(stdout);
    exit(0);
}

int main(void)
{
    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    unsigned char *buf[2];
    void *dev[2];
    for (int i = 0; i < 2; i++) {
        buf[i] = malloc(LEN);
        if (!buf[i])
            return 2;
        memset(buf[i], 0, LEN);
        CHECK(hipHostRegister(buf[i], LEN, hipHostRegisterMapped));
        CHECK(hipHostGetDevicePointer(&dev[i], buf[i], 0));
    }
    /* Device work ahead of the memsets, so that the second is still queued
     * when its buffer is unregistered. */
    static struct kargs slow = { .work_us = 200 * 1000 };
    CHECK(simhipLaunchKernel(s, add_kernel, &slow));
    CHECK(hipMemsetAsync(dev[0], 0x5a, LEN, s));
    CHECK(hipMemsetAsync(dev[1], 0x3c, LEN, s));
    CHECK(hipHostUnregister(buf[1]));

    fflush(NULL);
    pid_t c = fork();
    if (c < 0)
        return 2;
    if (c == 0)
        child(buf);
    int st = 0;
    if (waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "child failed (status 0x%x%s)\n", st,
                WIFSIGNALED(st) ? ", killed by a signal" : "");
        (*legacy_failures())++;
    }
    CHECK(hipStreamSynchronize(s));
    static const unsigned char want[2] = { 0x5a, 0x3c };
    for (int i = 0; i < 2; i++)
        for (size_t k = 0; k < LEN; k += 4093)
            if (buf[i][k] != want[i]) {
                fprintf(stderr, "buffer %d: byte %zu is 0x%02x, want 0x%02x (the memset did not land)\n",
                        i, k, buf[i][k], want[i]);
                (*legacy_failures())++;
                break;
            }
    CHECK(hipHostUnregister(buf[0]));
    free(buf[0]);
    free(buf[1]);
    CHECK(hipStreamDestroy(s));
    return legacy_finish();
}
