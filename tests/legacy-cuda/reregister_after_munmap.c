/*
 * reregister_after_munmap.c - a staging-buffer pool that pins each buffer it
 * maps and forgets to unpin it before returning the pages to the system.
 *
 * On CUDA the pages stay pinned after munmap, so the next buffer mapped at
 * the same address cannot be registered: CUDA_ERROR_HOST_MEMORY_ALREADY_
 * REGISTERED (712), as CuPy users meet it with freed NumPy arrays.
 */
#include <sys/mman.h>

#include "legacy_cuda.h"

#define N (256 * 1024 / sizeof(int))
#define ROUNDS 8

int main(void)
{
    lc_init();
    CUstream s;
    CUdeviceptr d;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CHECK(cuMemAlloc_v2(&d, N * sizeof(int)));
    int *out;
    CHECK(cuMemHostAlloc((void **)&out, N * sizeof(int), 0));
    for (int round = 0; round < ROUNDS; round++) {
        int *buf = mmap(NULL, N * sizeof(int), PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (buf == MAP_FAILED)
            return 2;
        for (size_t i = 0; i < N; i++)
            buf[i] = lc_pattern(i, round);
        CHECK(cuMemHostRegister_v2(buf, N * sizeof(int), 0));
        CHECK(cuMemcpyHtoDAsync_v2(d, buf, N * sizeof(int), s));
        CHECK(cuMemcpyDtoHAsync_v2(out, d, N * sizeof(int), s));
        CHECK(cuStreamSynchronize(s));
        if (!lc_verify("round", out, N, round))
            return 1;
        munmap(buf, N * sizeof(int)); /* the bug: still registered */
    }
    CHECK(cuMemFreeHost(out));
    CHECK(cuMemFree_v2(d));
    CHECK(cuStreamDestroy_v2(s));
    printf("OK\n");
    return 0;
}
