/*
 * attr_race - hipPointerGetAttributes racing hipHostUnregister.
 *
 * A worker thread repeatedly pins a buffer, runs a kernel on it and unpins
 * it; a monitoring thread keeps asking the runtime what the buffer is. The
 * query and the unregister touch the same runtime object at the same time:
 * the runtime crashes.
 */
#include <pthread.h>
#include <stdatomic.h>
#include "legacy.h"

#define ITERS 2000
#define N 4096

static int *buf;
static atomic_int done;
static long registered_answers, unregistered_answers;

static void *monitor(void *arg)
{
    (void)arg;
    while (!atomic_load(&done)) {
        hipPointerAttribute_t attr;
        memset(&attr, 0, sizeof(attr));
        hipError_t err = hipPointerGetAttributes(&attr, buf);
        if (err == hipSuccess && attr.hostPointer == buf) {
            registered_answers++;
        } else if (err == hipErrorInvalidValue ||
                   (err == hipSuccess && attr.hostPointer == NULL)) {
            unregistered_answers++; /* what the runtime says of plain memory */
        } else if (err == hipSuccess) {
            fprintf(stderr, "hipPointerGetAttributes: hostPointer %p, want %p\n",
                    attr.hostPointer, (void *)buf);
            exit(1);
        } else {
            fprintf(stderr, "hipPointerGetAttributes failed: %s (%d)\n",
                    hipGetErrorName(err), (int)err);
            exit(1);
        }
    }
    return NULL;
}

int main(void)
{
    buf = aligned_alloc(4096, N * sizeof(int));
    if (!buf)
        return 2;
    hipStream_t stream;
    CHECK(hipStreamCreate(&stream));

    pthread_t t;
    pthread_create(&t, NULL, monitor, NULL);

    struct kargs args;
    for (int i = 0; i < ITERS; i++) {
        int *dbuf;
        CHECK(hipHostRegister(buf, N * sizeof(int), hipHostRegisterMapped));
        CHECK(hipHostGetDevicePointer((void **)&dbuf, buf, 0));
        args = (struct kargs){ .dev = dbuf, .n = N, .seed = i };
        CHECK(simhipLaunchKernel(stream, fill_kernel, &args));
        CHECK(hipStreamSynchronize(stream));
        if (!legacy_verify("buf", buf, N, 0, i, 0))
            break;
        CHECK(hipHostUnregister(buf));

        /* once unregistered, the runtime must describe plain memory */
        hipPointerAttribute_t attr;
        memset(&attr, 0, sizeof(attr));
        hipError_t err = hipPointerGetAttributes(&attr, buf);
        if (!(err == hipErrorInvalidValue || (err == hipSuccess && attr.hostPointer == NULL))) {
            fprintf(stderr, "after hipHostUnregister: hipPointerGetAttributes returned %s (%d),"
                    " hostPointer %p: still registered\n", hipGetErrorName(err), (int)err,
                    attr.hostPointer);
            (*legacy_failures())++;
            break;
        }
    }
    atomic_store(&done, 1);
    pthread_join(t, NULL);

    printf("monitor saw %ld registered and %ld unregistered answers\n",
           registered_answers, unregistered_answers);
    CHECK(hipStreamDestroy(stream));
    free(buf);
    return legacy_finish();
}
