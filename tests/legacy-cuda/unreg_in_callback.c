/*
 * unreg_in_callback.c - a pipeline that unpins each staging buffer from a
 * host function queued after the copy that used it ("cleanup when the
 * stream gets there"), then pins the buffer again for the next batch.
 *
 * CUDA forbids driver calls in host functions: the unregister returns 800
 * (CUDA_ERROR_NOT_PERMITTED) and the buffer stays pinned, so the next
 * batch's register fails with 712.
 */
#include "legacy_cuda.h"

#define N (64 * 1024)
#define BATCHES 4

static int staging[N];
static CUresult in_callback = CUDA_SUCCESS;

static void unpin(void *p)
{
    CUresult r = cuMemHostUnregister(p);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "cuMemHostUnregister in a host function returned %s (%d)\n", lc_name(r),
                (int)r);
        in_callback = r;
    }
}

static CUresult pin(void *p, size_t n) { return cuMemHostRegister_v2(p, n, 0); }

int main(void)
{
    lc_init();
    if (!lc_staging_batches(staging, N, BATCHES, pin, cuLaunchHostFunc, unpin))
        return 1;
    if (in_callback != CUDA_SUCCESS)
        return 1;
    printf("OK\n");
    return 0;
}
