/* cuStreamDestroy from a host function: bare the driver refuses (800 on the H200, 201 on simcuda)
 * and the stream lives on; the program keeps using it. */
#include "simcuda.h"
#include <stdio.h>
#include <unistd.h>
static CUstream victim; static CUresult rc = -1;
static void hf(void *u) { (void)u; rc = cuStreamDestroy_v2(victim); }
static void k(void *a) { (*(int *)a)++; }
int main(void) {
    CUdevice d; CUcontext c; cuInit(0); cuDeviceGet(&d, 0); cuDevicePrimaryCtxRetain(&c, d); cuCtxSetCurrent(c);
    CUstream s; cuStreamCreate(&s, 0); cuStreamCreate(&victim, CU_STREAM_NON_BLOCKING);
    cuLaunchHostFunc(s, hf, NULL); cuStreamSynchronize(s);
    printf("destroy_in_hostfn=%d\n", rc);
    usleep(300000);
    int n = 0;
    printf("launch_after=%d\n", simcudaLaunchKernel(victim, k, &n));
    printf("sync_after=%d n=%d\n", cuStreamSynchronize(victim), n);
    printf("query_after=%d\n", cuStreamQuery(victim));
    printf("destroy_after=%d\n", cuStreamDestroy_v2(victim));
    return 0;
}
