/* each hook with invalid arguments; prints every return code */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hip_check.h"
#include "simhip.h"
#define hipLaunchHostFunc(s, f, u) ((hipError_t(*)(hipStream_t, void (*)(void *), void *))simhip_sym_("hipLaunchHostFunc"))(s, f, u)
static void cb(hipStream_t s, hipError_t e, void *u) { (void)s; (void)e; (void)u; }
static void hf(void *u) { (void)u; }
#define P(x) printf("%-60s %d\n", #x, (int)(x))
int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    hipStream_t s; hipStreamCreate(&s);
    char *p = aligned_alloc(4096, 65536);
    hipHostRegister(p, 65536, 0);
    unsigned fl = 77; void *dp = (void *)1; hipPointerAttribute_t at; hipGraph_t g = (hipGraph_t)1;
    P(hipStreamCreate(NULL));
    P(hipStreamCreateWithFlags(NULL, 0));
    P(hipStreamCreateWithFlags(&s, 0xffff) != 0);
    P(hipStreamCreateWithPriority(NULL, 0, 0));
    P(hipStreamAddCallback(s, NULL, NULL, 0));
    P(hipStreamAddCallback(s, cb, NULL, 1));
    P(hipLaunchHostFunc(s, NULL, NULL));
    P(hipMemcpyAsync(NULL, NULL, 0, hipMemcpyHostToHost, s));
    P(hipMemcpyAsync(NULL, p, 16, hipMemcpyHostToHost, s));
    P(hipMemcpyAsync(p, p + 8, 16, (hipMemcpyKind)99, s));
    P(hipHostGetDevicePointer(NULL, p, 0));
    P(hipHostGetDevicePointer(&dp, p, 5));
    P(hipHostGetDevicePointer(&dp, NULL, 0));
    P(hipHostGetDevicePointer(&dp, p + 65536, 0));
    P(hipHostGetFlags(NULL, p));
    P(hipHostGetFlags(&fl, NULL));
    P(hipHostGetFlags(&fl, p + 100)); printf("fl %u\n", fl);
    P(hipPointerGetAttributes(NULL, p));
    P(hipPointerGetAttributes(&at, NULL));
    memset(&at, 0x5a, sizeof at);
    P(hipPointerGetAttributes(&at, p + 4096)); printf("type %d hostptr-off %ld\n", (int)at.memoryType, (long)((char *)at.hostPointer - p));
    P(hipStreamBeginCapture(s, (hipStreamCaptureMode)42));
    P(hipStreamEndCapture(s, &g));
    P(hipStreamEndCapture(s, NULL));
    P(hipStreamBeginCapture(0, hipStreamCaptureModeGlobal));
    P(hipStreamEndCapture(0, &g));
    P(hipFree(NULL));
    P(hipHostRegister(p, 65536, 0xff00));
    P(hipHostRegister(p + 65536 - 4096, 8192, 0));
    P(hipStreamDestroy(NULL));
    P(hipStreamSynchronize(s));
    P(hipStreamDestroy(s));
    P(hipHostUnregister(p));
    P(hipHostUnregister(p));
    P(hipHostGetFlags(&fl, p));
    P(hipHostGetDevicePointer(&dp, p, 0));
    free(p);
    return 0;
}
