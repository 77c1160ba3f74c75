/*
 * lost_writes_free.c - a result buffer from malloc, pinned so that the
 * device can copy results into it, and freed without being unpinned; the
 * next batch's buffer comes back at the same address. The program treats
 * 712 ("already registered") as "already pinned, fine".
 *
 * On CUDA the freed pages stay pinned: the device's copies land in pages
 * the process no longer has, and the new buffer never receives them. The
 * results are lost, silently (no fault, no error).
 */
#include <malloc.h>

#include "legacy_cuda.h"

#define N (1024 * 1024 / sizeof(int))
#define ROUNDS 4

int main(void)
{
    /* Large blocks always come from mmap (no dynamic threshold). */
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    lc_init();
    CUstream s;
    CUdeviceptr d;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CHECK(cuMemAlloc_v2(&d, N * sizeof(int)));
    int *src;
    CHECK(cuMemHostAlloc((void **)&src, N * sizeof(int), 0));
    int bad = 0;
    for (int round = 0; round < ROUNDS; round++) {
        for (size_t i = 0; i < N; i++)
            src[i] = lc_pattern(i, round);
        int *res = malloc(N * sizeof(int));
        if (!res)
            return 2;
        memset(res, 0, N * sizeof(int));
        CUresult r = cuMemHostRegister_v2(res, N * sizeof(int), 0);
        if (r == CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED)
            printf("round %d: result buffer already pinned (712), using it\n", round);
        else
            CHECK(r);
        CHECK(cuMemcpyHtoDAsync_v2(d, src, N * sizeof(int), s));
        CHECK(cuMemcpyDtoHAsync_v2(res, d, N * sizeof(int), s));
        CHECK(cuStreamSynchronize(s));
        if (!lc_verify("results", res, N, round)) {
            fprintf(stderr, "round %d: the device's results never reached the buffer (lost writes)\n",
                    round);
            bad++;
        }
        free(res); /* the bug: still registered */
    }
    CHECK(cuMemFreeHost(src));
    CHECK(cuMemFree_v2(d));
    CHECK(cuStreamDestroy_v2(s));
    if (bad)
        return 1;
    printf("OK\n");
    return 0;
}
