/*
 * fault_prog - one ordinary workload for the injected-fault tests
 * (tests/fault/run.sh sets SIMHIP_FAIL): create a stream, register a
 * buffer, a slow kernel writes it, a host function, unregister, read the
 * bytes without a sync (ordered visibility), sync, read again, free.
 *
 * Prints one line per runtime call: "<call> <rc>", then "visible" or
 * "stale" (bytes read right after the unregister), then "bytes ok" or
 * "bytes lost" (after hipDeviceSynchronize), then OK. A call that fails is
 * handled as a careful program handles it (no registration: no kernel on
 * the buffer; no stream: the null stream).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <hip/hip_runtime_api.h>
#include "simhip.h"

#define N (64 * 1024)

struct kargs { unsigned char *p; };
static atomic_int hostfn_ran;

static void slow_write(void *a)
{
    struct kargs *k = a;
    static unsigned char v[N];
    usleep(20000);
    for (size_t i = 0; i < N; i++)
        v[i] = (unsigned char)(i * 3 + 1);
    simhipDeviceWrite(k->p, v, N);
}

static void cb(hipStream_t s, hipError_t st, void *u)
{
    (void)s; (void)st; (void)u;
    atomic_store(&hostfn_ran, 1);
}

static int bytes_are(const unsigned char *p, int written)
{
    for (size_t i = 0; i < N; i++)
        if (p[i] != (unsigned char)(written ? i * 3 + 1 : i * 5))
            return 0;
    return 1;
}

int main(void)
{
    unsigned char *buf = aligned_alloc(4096, N);
    if (!buf)
        return 2;
    for (size_t i = 0; i < N; i++)
        buf[i] = (unsigned char)(i * 5);
    hipStream_t s = 0;
    hipError_t e = hipStreamCreate(&s);
    printf("hipStreamCreate %d\n", (int)e);
    if (e != hipSuccess)
        s = 0;
    e = hipHostRegister(buf, N, 0);
    printf("hipHostRegister %d\n", (int)e);
    int registered = e == hipSuccess;
    static struct kargs k;
    k.p = buf;
    if (registered) {
        e = simhipLaunchKernel(s, slow_write, &k);
        printf("simhipLaunchKernel %d\n", (int)e);
    }
    e = hipStreamAddCallback(s, cb, NULL, 0);
    printf("hipStreamAddCallback %d\n", (int)e);
    if (registered) {
        e = hipHostUnregister(buf);
        printf("hipHostUnregister %d\n", (int)e);
        printf("%s\n", bytes_are(buf, 1) ? "visible" : "stale");
    }
    e = hipDeviceSynchronize();
    printf("hipDeviceSynchronize %d\n", (int)e);
    printf("%s\n", bytes_are(buf, registered) ? "bytes ok" : "bytes lost");
    free(buf);
    if (s)
        hipStreamDestroy(s);
    printf("OK\n");
    return 0;
}
