/*
 * diag_codes.c - triggers one safepin diagnostic code per mode:
 *   diag_codes <mode>
 * Modes are the code names of DESIGN section 6. Exits 0 when the program's
 * own expectations about return codes held (with safepin).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <hip/hip_runtime_api.h>
#include "simhip.h"

#define N 4096

static int fails;
#define EXPECT(call, want)                                                                    \
    do {                                                                                      \
        hipError_t e_ = (call);                                                               \
        if (e_ != (want)) {                                                                   \
            fprintf(stderr, "%s returned %d, expected %d\n", #call, (int)e_, (int)(want));   \
            fails++;                                                                          \
        }                                                                                     \
    } while (0)

static void sleepy(void *arg) { usleep((useconds_t)(size_t)arg); }

static hipStream_t capture_stream;
static volatile int capture_phase;

static void *capturer(void *arg)
{
    (void)arg;
    EXPECT(hipStreamBeginCapture(capture_stream, hipStreamCaptureModeGlobal), hipSuccess);
    capture_phase = 1;
    while (capture_phase != 2)
        usleep(1000);
    hipGraph_t g = NULL;
    EXPECT(hipStreamEndCapture(capture_stream, &g), hipSuccess);
    if (g)
        hipGraphDestroy(g);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: diag_codes <code>\n");
        return 2;
    }
    const char *m = argv[1];
    char *buf = malloc(2 * N);
    hipStream_t nb;
    EXPECT(hipStreamCreateWithFlags(&nb, hipStreamNonBlocking), hipSuccess);

    if (!strcmp(m, "double-unregister")) {
        EXPECT(hipHostRegister(buf, N, 0), hipSuccess);
        EXPECT(hipHostUnregister(buf), hipSuccess);
        EXPECT(hipHostUnregister(buf), hipErrorHostMemoryNotRegistered);
    } else if (!strcmp(m, "unregister-unknown")) {
        int on_stack[16];
        EXPECT(hipHostUnregister(on_stack), hipErrorHostMemoryNotRegistered);
    } else if (!strcmp(m, "unregister-interior")) {
        EXPECT(hipHostRegister(buf, N, 0), hipSuccess);
        EXPECT(hipHostUnregister(buf + 64), hipErrorHostMemoryNotRegistered);
        EXPECT(hipHostUnregister(buf), hipSuccess);
    } else if (!strcmp(m, "overlapping-register")) {
        EXPECT(hipHostRegister(buf, N, 0), hipSuccess);
        EXPECT(hipHostRegister(buf + 16, N, 0), hipErrorHostMemoryAlreadyRegistered);
        EXPECT(hipHostUnregister(buf), hipSuccess);
    } else if (!strcmp(m, "nested-register")) {
        EXPECT(hipHostRegister(buf, N, 0), hipSuccess);
        EXPECT(hipHostRegister(buf, N, 0), hipSuccess);
        EXPECT(hipHostUnregister(buf), hipSuccess);
        EXPECT(hipHostUnregister(buf), hipSuccess);
    } else if (!strcmp(m, "freed-while-registered")) {
        EXPECT(hipHostRegister(buf, N, 0), hipSuccess);
        free(buf);
        buf = NULL;
    } else if (!strcmp(m, "hipfree-host-pointer")) {
        EXPECT(hipHostRegister(buf, N, 0), hipSuccess);
        EXPECT(hipFree(buf), hipErrorInvalidValue);
        EXPECT(hipHostUnregister(buf), hipSuccess);
    } else if (!strcmp(m, "leak-at-exit")) {
        EXPECT(hipHostRegister(buf, N, 0), hipSuccess);
    } else if (!strcmp(m, "capture-deferred")) {
        EXPECT(hipStreamCreate(&capture_stream), hipSuccess);
        EXPECT(hipHostRegister(buf, N, 0), hipSuccess);
        pthread_t t;
        pthread_create(&t, NULL, capturer, NULL);
        while (!capture_phase)
            usleep(1000);
        EXPECT(hipHostUnregister(buf), hipSuccess);
        usleep(100000);
        capture_phase = 2;
        pthread_join(t, NULL);
    } else if (!strcmp(m, "release-timeout")) {
        EXPECT(hipHostRegister(buf, N, 0), hipSuccess);
        EXPECT(simhipLaunchKernel(nb, sleepy, (void *)(size_t)1500000), hipSuccess);
        EXPECT(hipHostUnregister(buf), hipSuccess);
        /* exit with drain_timeout_ms shorter than the kernel */
    } else if (!strcmp(m, "runtime-error")) {
        /* A library unregisters through a path safepin does not hook
         * (dlvsym on the runtime): safepin's own deferred unregister then
         * fails inside the release. */
        EXPECT(hipHostRegister(buf, N, 0), hipSuccess);
        void *h = dlopen("libamdhip64.so.5", RTLD_NOW | RTLD_NOLOAD);
        hipError_t (*raw)(void *) = h ? (hipError_t(*)(void *))dlvsym(h, "hipHostUnregister", "hip_4.2") : NULL;
        if (!raw) {
            fprintf(stderr, "no raw hipHostUnregister\n");
            return 1;
        }
        EXPECT(raw(buf), hipSuccess);
        EXPECT(hipHostUnregister(buf), hipSuccess);
    } else if (!strcmp(m, "use-after-unregister")) {
        /* A bug safepin cannot prevent (work enqueued after the unregister
         * touches the range): the device faults; safepin's post-mortem shows
         * the history of the range that held the address. */
        char *page = aligned_alloc(4096, 4 * N);
        EXPECT(hipHostRegister(page, 4 * N, 0), hipSuccess);
        EXPECT(hipMemsetAsync(page, 0, 4 * N, nb), hipSuccess);
        EXPECT(hipStreamSynchronize(nb), hipSuccess);
        EXPECT(hipHostUnregister(page), hipSuccess);
        EXPECT(hipDeviceSynchronize(), hipSuccess);
        usleep(100000); /* the release has completed */
        EXPECT(hipMemsetAsync(page + 100, 1, 16, nb), hipSuccess);
        EXPECT(hipStreamSynchronize(nb), hipSuccess);
        fprintf(stderr, "no fault?\n");
        return 1;
    } else if (!strcmp(m, "invalid-argument")) {
        EXPECT(hipHostRegister(NULL, N, 0), hipErrorInvalidValue);
        EXPECT(hipHostRegister(buf, 0, 0), hipErrorInvalidValue);
        EXPECT(hipHostUnregister(NULL), hipErrorInvalidValue);
    } else {
        fprintf(stderr, "unknown mode %s\n", m);
        return 2;
    }
    if (fails)
        return 1;
    printf("OK\n");
    return 0;
}
