/* hooks called from a host function and a stream callback */
#include <stdio.h>
#include <stdlib.h>
#include "hip_check.h"
#include "simhip.h"
#define hipLaunchHostFunc(s, f, u) ((hipError_t(*)(hipStream_t, void (*)(void *), void *))simhip_sym_("hipLaunchHostFunc"))(s, f, u)
static char *p, *q;
static hipError_t r[10];
static void hf(void *u)
{
    (void)u;
    hipStream_t s2;
    r[0] = hipHostRegister(q, 65536, 0);
    r[1] = hipHostGetFlags(&(unsigned){0}, p);
    r[2] = hipStreamCreate(&s2);
    r[3] = hipStreamDestroy(s2);
    hipPointerAttribute_t a;
    r[4] = hipPointerGetAttributes(&a, p);
    r[5] = hipMemcpyAsync(q, p, 16, hipMemcpyHostToHost, 0);
}
int main(void)
{
    hipStream_t s; hipStreamCreate(&s);
    p = aligned_alloc(4096, 65536); q = aligned_alloc(4096, 65536);
    hipHostRegister(p, 65536, 0);
    printf("launch %d\n", hipLaunchHostFunc(s, hf, NULL));
    printf("sync %d\n", hipStreamSynchronize(s));
    for (int i = 0; i < 6; i++) printf("r%d %d\n", i, r[i]);
    printf("unreg q %d\n", hipHostUnregister(q));
    printf("unreg p %d\n", hipHostUnregister(p));
    free(p); free(q);
    return 0;
}
