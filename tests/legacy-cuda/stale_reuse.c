/*
 * stale_reuse.c - the same pool, written by someone who met 712 and decided
 * it means "already pinned, carry on" (a common idiom).
 *
 * The buffer mapped at the old address is not the pinned one: the device
 * keeps reading the pages pinned for an earlier round, which the process
 * no longer sees. Every later round copies stale data, silently.
 */
#include <sys/mman.h>

#include "legacy_cuda.h"

#define N (256 * 1024 / sizeof(int))
#define ROUNDS 4

int main(void)
{
    lc_init();
    CUstream s;
    CUdeviceptr d;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CHECK(cuMemAlloc_v2(&d, N * sizeof(int)));
    int *out;
    CHECK(cuMemHostAlloc((void **)&out, N * sizeof(int), 0));
    int bad = 0;
    for (int round = 0; round < ROUNDS; round++) {
        int *buf = mmap(NULL, N * sizeof(int), PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (buf == MAP_FAILED)
            return 2;
        for (size_t i = 0; i < N; i++)
            buf[i] = lc_pattern(i, round);
        CUresult r = cuMemHostRegister_v2(buf, N * sizeof(int), 0);
        if (r == CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED)
            printf("round %d: buffer already pinned (712), using it\n", round);
        else
            CHECK(r);
        CHECK(cuMemcpyHtoDAsync_v2(d, buf, N * sizeof(int), s));
        CHECK(cuMemcpyDtoHAsync_v2(out, d, N * sizeof(int), s));
        CHECK(cuStreamSynchronize(s));
        if (!lc_verify("round", out, N, round))
            bad++;
        munmap(buf, N * sizeof(int)); /* the bug: still registered */
    }
    CHECK(cuMemFreeHost(out));
    CHECK(cuMemFree_v2(d));
    CHECK(cuStreamDestroy_v2(s));
    if (bad)
        return 1;
    printf("OK\n");
    return 0;
}
