/* T2: host functions that take mutex M, one at a time on a non-blocking
 * stream. T1: register/unregister a 1 MiB block, then free it holding M
 * (free never waits for the device without safepin). Each block is
 * re-registered once first (under safepin: revived), so that the size keeps
 * its revive grace and every free comes in a grace. */
#include "legacy.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
static pthread_mutex_t M = PTHREAD_MUTEX_INITIALIZER;
static atomic_int stop;
static hipStream_t s;
static void take_m(hipStream_t st_, hipError_t e_, void *arg) { (void)st_; (void)e_; (void)arg; pthread_mutex_lock(&M); pthread_mutex_unlock(&M); }
static void *t2(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop)) {
        CHECK(hipStreamAddCallback(s, take_m, NULL, 0));
        CHECK(hipStreamSynchronize(s));
    }
    return NULL;
}
int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 300;
    size_t n = 1u << 20;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    pthread_t t;
    pthread_create(&t, NULL, t2, NULL);
    for (int i = 0; i < iters; i++) {
        char *a = malloc(n);
        a[0] = 1;
        CHECK(hipHostRegister(a, n, 0));
        CHECK(hipHostUnregister(a));
        CHECK(hipHostRegister(a, n, 0));
        CHECK(hipHostUnregister(a));
        pthread_mutex_lock(&M);
        free(a);
        pthread_mutex_unlock(&M);
    }
    atomic_store(&stop, 1);
    pthread_join(t, NULL);
    printf("OK\n");
    return 0;
}
