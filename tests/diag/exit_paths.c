/*
 * exit_paths.c - ways a program ends with a release pending (G9).
 *
 *   exit_paths hostfn    exit(0) from a stream callback, after the main thread
 *                        unregistered a buffer: the release's marker on the
 *                        host function's stream is queued behind it.
 *   exit_paths capture   exit(0) while a stream capture (relaxed mode) is
 *                        open, after an unregister: the release waits for a
 *                        capture that never ends.
 *   exit_paths teardown  return from main right after unregistering a buffer
 *                        that a long kernel on the null stream still uses:
 *                        the release completes at exit, before the runtime
 *                        tears itself down in its destructor.
 *
 * Each prints OK and exits 0, without safepin and with it. Under safepin
 * the run must not stall nor count a violation for what could not complete.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <hip/hip_runtime_api.h>
#include "simhip.h"

#define N (64 * 1024)

#define CHECK(call)                                                            \
    do {                                                                       \
        hipError_t e_ = (call);                                                \
        if (e_ != hipSuccess) {                                                \
            fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__,      \
                    #call, (int)e_);                                           \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

static void exit_from_host_function(hipStream_t s, hipError_t status, void *arg)
{
    (void)s;
    (void)status;
    (void)arg;
    usleep(100000); /* the main thread has unregistered by now */
    puts("OK");
    fflush(stdout);
    exit(0);
}

struct job {
    int *dev;
    unsigned work_us;
};

static void slow_add(void *p)
{
    struct job *j = p;
    int tmp[1024];
    usleep(j->work_us);
    for (size_t i = 0; i < N; i += 1024) {
        simhipDeviceRead(tmp, j->dev + i, sizeof tmp);
        for (int k = 0; k < 1024; k++)
            tmp[k] += 1;
        simhipDeviceWrite(j->dev + i, tmp, sizeof tmp);
    }
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    size_t bytes = N * sizeof(int);
    int *buf = aligned_alloc(4096, bytes);
    if (!buf)
        return 2;
    memset(buf, 0, bytes);
    CHECK(hipHostRegister(buf, bytes, hipHostRegisterMapped));
    int *dbuf;
    CHECK(hipHostGetDevicePointer((void **)&dbuf, buf, 0));

    if (strcmp(mode, "hostfn") == 0) {
        hipStream_t s;
        CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
        CHECK(hipMemsetAsync(dbuf, 1, bytes, s));
        CHECK(hipStreamSynchronize(s));
        CHECK(hipStreamAddCallback(s, exit_from_host_function, NULL, 0));
        CHECK(hipHostUnregister(buf));
        CHECK(hipStreamSynchronize(s)); /* the host function ends the process */
        fprintf(stderr, "the host function did not exit\n");
        return 1;
    }
    if (strcmp(mode, "capture") == 0) {
        hipStream_t s;
        CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
        CHECK(hipStreamBeginCapture(s, hipStreamCaptureModeRelaxed));
        CHECK(hipMemsetAsync(dbuf, 1, bytes, s)); /* a graph node: never runs */
        CHECK(hipHostUnregister(buf));
        puts("OK");
        fflush(stdout);
        exit(0); /* the capture is still open */
    }
    if (strcmp(mode, "teardown") == 0) {
        static struct job j;
        j = (struct job){ dbuf, 300000 };
        CHECK(simhipLaunchKernel(0, slow_add, &j));
        CHECK(hipHostUnregister(buf)); /* the kernel still runs */
        puts("OK");
        return 0;
    }
    fprintf(stderr, "usage: exit_paths hostfn|capture|teardown\n");
    return 2;
}
