/* free of a 1 MiB registered-then-unregistered block (in its revive grace)
 * while a destroyed non-blocking stream still has a host function pending
 * that waits for a flag the program sets after the free. Bare: free never
 * waits for the device. */
#include "legacy.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
static atomic_int flag;
static void wait_flag(hipStream_t st_, hipError_t e_, void *arg) { (void)st_; (void)e_; (void)arg; while (!atomic_load(&flag)) usleep(100); }
int main(void)
{
    size_t n = 2u << 20;
    char *a = malloc(n);
    memset(a, 1, n);
    CHECK(hipHostRegister(a, n, 0));
    CHECK(hipHostUnregister(a));
    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    CHECK(hipStreamAddCallback(s, wait_flag, NULL, 0));
    CHECK(hipStreamDestroy(s));
    free(a); /* in its grace */
    atomic_store(&flag, 1);
    CHECK(hipDeviceSynchronize());
    printf("OK\n");
    return 0;
}
