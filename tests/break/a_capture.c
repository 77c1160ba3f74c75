/* hooks during a capture, each mode, own stream and other thread */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hip_check.h"
#include "simhip.h"
static hipStream_t s;
static char *p, *q;
static void *other(void *a)
{
    (void)a;
    printf("other reg %d\n", hipHostRegister(q, 65536, 0));
    printf("other unreg %d\n", hipHostUnregister(q));
    hipStream_t s2;
    printf("other screate %d\n", hipStreamCreate(&s2));
    printf("other sdestroy %d\n", hipStreamDestroy(s2));
    return NULL;
}
int main(int argc, char **argv)
{
    int mode = argc > 1 ? atoi(argv[1]) : 0;
    hipStreamCreate(&s);
    p = aligned_alloc(4096, 65536); q = aligned_alloc(4096, 65536);
    hipHostRegister(p, 65536, 0);
    printf("begin %d\n", hipStreamBeginCapture(s, (hipStreamCaptureMode)mode));
    printf("memcpy %d\n", hipMemcpyAsync(q, p, 16, hipMemcpyHostToHost, s));
    printf("unreg in capture %d\n", hipHostUnregister(p));
    printf("reg in capture %d\n", hipHostRegister(p, 65536, 0));
    pthread_t t; pthread_create(&t, 0, other, 0); pthread_join(t, 0);
    hipStream_t s3;
    printf("screate %d\n", hipStreamCreate(&s3));
    hipGraph_t g = NULL;
    printf("end %d\n", hipStreamEndCapture(s, &g));
    if (g) {
        hipGraphExec_t ge;
        printf("inst %d\n", hipGraphInstantiate(&ge, g, NULL, NULL, 0));
        printf("launch %d\n", hipGraphLaunch(ge, s));
        printf("sync %d\n", hipStreamSynchronize(s));
    }
    printf("unreg after %d\n", hipHostUnregister(p));
    printf("unreg after2 %d\n", hipHostUnregister(p));
    printf("sync %d\n", hipStreamSynchronize(s));
    return 0;
}
