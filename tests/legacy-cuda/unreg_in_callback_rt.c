/*
 * unreg_in_callback_rt.c - unreg_in_callback written against the runtime
 * API: each staging buffer is unpinned by a host function queued after the
 * copy that used it, then pinned again for the next batch. Linked with the
 * stand-in shared runtime (rt/minirt.h), as nvcc -cudart shared, CuPy and
 * PyTorch programs are with NVIDIA's.
 *
 * The runtime refuses the unregister in the host function with 800 (its
 * prologue's driver queries are refused there) and the buffer stays pinned,
 * so the next batch's register fails with 712.
 */
#include "legacy_cuda.h"
#include "minirt.h"

#define N (64 * 1024)
#define BATCHES 4

static int staging[N];
static int in_callback;

static void unpin(void *p)
{
    int r = cudaHostUnregister(p);
    if (r != 0) {
        fprintf(stderr, "cudaHostUnregister in a host function returned %s (%d)\n",
                lc_name((CUresult)r), r);
        in_callback = r;
    }
}

/* A runtime call that must succeed. */
#define RT(call) CHECK((CUresult)(call))

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
        RT(cudaHostRegister(staging, sizeof staging, 0));
        CHECK(cuMemcpyHtoDAsync_v2(d, staging, sizeof staging, s));
        RT(cudaLaunchHostFunc(s, unpin, staging));
        CHECK(cuMemcpyDtoHAsync_v2(out, d, sizeof staging, s));
        CHECK(cuStreamSynchronize(s));
        if (!lc_verify("batch", out, N, b))
            return 1;
    }
    /* Outside host functions the runtime's own unregister answers. */
    RT(cudaHostRegister(staging, sizeof staging, 0));
    RT(cudaHostUnregister(staging));
    int again = cudaHostUnregister(staging);
    if (again != CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED) {
        fprintf(stderr, "a second cudaHostUnregister returned %d, want 713\n", again);
        return 1;
    }
    CHECK(cuMemFreeHost(out));
    CHECK(cuMemFree_v2(d));
    CHECK(cuStreamDestroy_v2(s));
    if (in_callback != 0)
        return 1;
    printf("OK\n");
    return 0;
}
