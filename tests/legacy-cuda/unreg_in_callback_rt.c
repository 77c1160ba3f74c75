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

/* The runtime's calls, as the pipeline takes them. */
static CUresult pin(void *p, size_t n) { return (CUresult)cudaHostRegister(p, n, 0); }
static CUresult enqueue(CUstream s, CUhostFn fn, void *ud) { return (CUresult)cudaLaunchHostFunc(s, fn, ud); }

int main(void)
{
    lc_init();
    if (!lc_staging_batches(staging, N, BATCHES, pin, enqueue, unpin))
        return 1;
    /* Outside host functions the runtime's own unregister answers. */
    CHECK(pin(staging, sizeof staging));
    CHECK((CUresult)cudaHostUnregister(staging));
    int again = cudaHostUnregister(staging);
    if (again != CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED) {
        fprintf(stderr, "a second cudaHostUnregister returned %d, want 713\n", again);
        return 1;
    }
    if (in_callback != 0)
        return 1;
    printf("OK\n");
    return 0;
}
