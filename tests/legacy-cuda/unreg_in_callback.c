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

int main(void)
{
    lc_init();
    CUstream s;
    CUdeviceptr d;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CHECK(cuMemAlloc_v2(&d, sizeof staging));
    int *out;
    CHECK(cuMemHostAlloc((void **)&out, sizeof staging, 0));
    for (int b = 0; b < BATCHES; b++) {
        for (int i = 0; i < N; i++)
            staging[i] = lc_pattern((size_t)i, b);
        CHECK(cuMemHostRegister_v2(staging, sizeof staging, 0));
        CHECK(cuMemcpyHtoDAsync_v2(d, staging, sizeof staging, s));
        CHECK(cuLaunchHostFunc(s, unpin, staging));
        CHECK(cuMemcpyDtoHAsync_v2(out, d, sizeof staging, s));
        CHECK(cuStreamSynchronize(s));
        if (!lc_verify("batch", out, N, b))
            return 1;
    }
    CHECK(cuMemFreeHost(out));
    CHECK(cuMemFree_v2(d));
    CHECK(cuStreamDestroy_v2(s));
    if (in_callback != CUDA_SUCCESS)
        return 1;
    printf("OK\n");
    return 0;
}
