/*
 * identical_reregister.c - two components of one program pin the same
 * buffer: a transfer engine pins it for its copies, and a codec library,
 * handed the same buffer, pins it again for its own use and unpins it when
 * it is done. Each unpins what it pinned, as a reference count would want.
 *
 * CUDA does not nest registrations: the second, identical register returns
 * 712 (CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED), and the codec fails.
 */
#include "legacy_cuda.h"

#define N (64 * 1024)

static int buf[N];

static void codec_encode(CUstream s, CUdeviceptr d)
{
    CHECK(cuMemHostRegister_v2(buf, sizeof buf, 0)); /* the second pin */
    CHECK(cuMemcpyDtoHAsync_v2(buf, d, sizeof buf, s));
    CHECK(cuStreamSynchronize(s));
    CHECK(cuMemHostUnregister(buf)); /* the codec's unpin */
}

int main(void)
{
    lc_init();
    CUstream s;
    CUdeviceptr d;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CHECK(cuMemAlloc_v2(&d, sizeof buf));
    for (int i = 0; i < N; i++)
        buf[i] = lc_pattern((size_t)i, 11);
    CHECK(cuMemHostRegister_v2(buf, sizeof buf, 0)); /* the engine's pin */
    CHECK(cuMemcpyHtoDAsync_v2(d, buf, sizeof buf, s));
    CHECK(cuStreamSynchronize(s));
    memset(buf, 0, sizeof buf);
    codec_encode(s, d);
    /* The engine's buffer is still pinned for it: copy again. */
    CHECK(cuMemcpyHtoDAsync_v2(d, buf, sizeof buf, s));
    CHECK(cuStreamSynchronize(s));
    CHECK(cuMemHostUnregister(buf));
    if (!lc_verify("codec output", buf, N, 11))
        return 1;
    CHECK(cuMemFree_v2(d));
    CHECK(cuStreamDestroy_v2(s));
    printf("OK\n");
    return 0;
}
