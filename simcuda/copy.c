/*
 * copy.c - copies and memsets, asynchronous on a stream or synchronous on
 * the legacy stream, over simhip's.
 */
#include "sc_internal.h"

hipError_t hipMemcpyAsync(void *dst, const void *src, size_t sizeBytes, hipMemcpyKind kind,
                          hipStream_t stream);
hipError_t hipMemsetAsync(void *dst, int value, size_t sizeBytes, hipStream_t stream);
hipError_t hipMemsetD32Async(hipDeviceptr_t dst, int value, size_t count, hipStream_t stream);

/* ---- copies and memsets ------------------------------------------------- */

static CUresult copy(void *dst, const void *src, size_t n, hipMemcpyKind kind, CUstream h, bool ptsz)
{
    hipStream_t hs = sc_stream(h, ptsz);
    CUresult e = sc_enter_enqueue(hs);
    if (e != CUDA_SUCCESS)
        return e;
    return sc_res(hipMemcpyAsync(dst, src, n, kind, hs));
}

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount,
                              CUstream hStream)
{
    return copy((void *)(uintptr_t)dstDevice, srcHost, ByteCount, hipMemcpyHostToDevice, hStream,
                false);
}

CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount,
                                   CUstream hStream)
{
    return copy((void *)(uintptr_t)dstDevice, srcHost, ByteCount, hipMemcpyHostToDevice, hStream,
                true);
}

CUresult cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,
                              CUstream hStream)
{
    return copy(dstHost, (const void *)(uintptr_t)srcDevice, ByteCount, hipMemcpyDeviceToHost,
                hStream, false);
}

CUresult cuMemcpyDtoHAsync_v2_ptsz(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,
                                   CUstream hStream)
{
    return copy(dstHost, (const void *)(uintptr_t)srcDevice, ByteCount, hipMemcpyDeviceToHost,
                hStream, true);
}

CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream)
{
    return copy((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, ByteCount, hipMemcpyDefault,
                hStream, false);
}

CUresult cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream)
{
    return copy((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, ByteCount, hipMemcpyDefault,
                hStream, true);
}

static CUresult fill(CUdeviceptr dst, unsigned value, unsigned elem, size_t n, CUstream h, bool ptsz)
{
    hipStream_t hs = sc_stream(h, ptsz);
    CUresult e = sc_enter_enqueue(hs);
    if (e != CUDA_SUCCESS)
        return e;
    void *d = (void *)(uintptr_t)dst;
    if (elem == 1)
        return sc_res(hipMemsetAsync(d, (int)value, n, hs));
    return sc_res(hipMemsetD32Async(d, (int)value, n, hs));
}

CUresult cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream)
{
    return fill(dstDevice, uc, 1, N, hStream, false);
}

CUresult cuMemsetD8Async_ptsz(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream)
{
    return fill(dstDevice, uc, 1, N, hStream, true);
}

CUresult cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream)
{
    return fill(dstDevice, ui, 4, N, hStream, false);
}

CUresult cuMemsetD32Async_ptsz(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream)
{
    return fill(dstDevice, ui, 4, N, hStream, true);
}

/* ---- synchronous copies and memsets ---------------------------------------
 * On the legacy stream (the per-thread stream in _ptds forms); they return
 * once the operation has run. */

static CUresult copy_sync(void *dst, const void *src, size_t n, hipMemcpyKind kind, bool ptds,
                          const char *api)
{
    hipStream_t hs = ptds ? hipStreamPerThread : NULL;
    CUresult e = sc_enter_enqueue(hs);
    if (e != CUDA_SUCCESS)
        return e;
    if (sc_in_host_fn())
        return CUDA_ERROR_NOT_PERMITTED;
    return sc_res(sh_copy(hs, dst, src, n, kind, true, api));
}

#define DP(x) ((void *)(uintptr_t)(x))

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
    return copy_sync(DP(dst), src, n, hipMemcpyHostToDevice, false, "cuMemcpyHtoD");
}
CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr dst, const void *src, size_t n)
{
    return copy_sync(DP(dst), src, n, hipMemcpyHostToDevice, true, "cuMemcpyHtoD");
}
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
    return copy_sync(dst, DP(src), n, hipMemcpyDeviceToHost, false, "cuMemcpyDtoH");
}
CUresult cuMemcpyDtoH_v2_ptds(void *dst, CUdeviceptr src, size_t n)
{
    return copy_sync(dst, DP(src), n, hipMemcpyDeviceToHost, true, "cuMemcpyDtoH");
}
CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    return copy_sync(DP(dst), DP(src), n, hipMemcpyDeviceToDevice, false, "cuMemcpyDtoD");
}
CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    return copy_sync(DP(dst), DP(src), n, hipMemcpyDeviceToDevice, true, "cuMemcpyDtoD");
}
CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    return copy_sync(DP(dst), DP(src), n, hipMemcpyDefault, false, "cuMemcpy");
}
CUresult cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    return copy_sync(DP(dst), DP(src), n, hipMemcpyDefault, true, "cuMemcpy");
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream h)
{
    return copy(DP(dst), DP(src), n, hipMemcpyDeviceToDevice, h, false);
}
CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream h)
{
    return copy(DP(dst), DP(src), n, hipMemcpyDeviceToDevice, h, true);
}

static CUresult fill_sync(CUdeviceptr dst, unsigned value, unsigned elem, size_t n, bool ptds)
{
    hipStream_t hs = ptds ? hipStreamPerThread : NULL;
    CUresult e = sc_enter_enqueue(hs);
    if (e != CUDA_SUCCESS)
        return e;
    if (sc_in_host_fn())
        return CUDA_ERROR_NOT_PERMITTED;
    return sc_res(sh_fill(hs, DP(dst), (int)value, elem, n, true, "cuMemsetD"));
}

CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n) { return fill_sync(d, v, 1, n, false); }
CUresult cuMemsetD8_v2_ptds(CUdeviceptr d, unsigned char v, size_t n) { return fill_sync(d, v, 1, n, true); }
CUresult cuMemsetD16_v2(CUdeviceptr d, unsigned short v, size_t n) { return fill_sync(d, v, 2, n, false); }
CUresult cuMemsetD16_v2_ptds(CUdeviceptr d, unsigned short v, size_t n) { return fill_sync(d, v, 2, n, true); }
CUresult cuMemsetD32_v2(CUdeviceptr d, unsigned int v, size_t n) { return fill_sync(d, v, 4, n, false); }
CUresult cuMemsetD32_v2_ptds(CUdeviceptr d, unsigned int v, size_t n) { return fill_sync(d, v, 4, n, true); }

static CUresult fill16(CUdeviceptr dst, unsigned short v, size_t n, CUstream h, bool ptsz)
{
    hipStream_t hs = sc_stream(h, ptsz);
    CUresult e = sc_enter_enqueue(hs);
    if (e != CUDA_SUCCESS)
        return e;
    return sc_res(sh_fill(hs, DP(dst), v, 2, n, false, "cuMemsetD16Async"));
}

CUresult cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, CUstream h) { return fill16(d, v, n, h, false); }
CUresult cuMemsetD16Async_ptsz(CUdeviceptr d, unsigned short v, size_t n, CUstream h) { return fill16(d, v, n, h, true); }
