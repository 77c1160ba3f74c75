/*
 * stream.c - streams, copies, memsets, host functions, events, capture and
 * graphs, over simhip's streams.
 *
 * Handles: NULL is the legacy stream (the per-thread stream in _ptsz
 * forms); CU_STREAM_LEGACY and CU_STREAM_PER_THREAD name them always. The
 * legacy stream waits for blocking and per-thread streams, never for
 * CU_STREAM_NON_BLOCKING ones (simhip's null-stream rules). Work on it
 * while a blocking stream of the device captures returns 906 and
 * invalidates a global capture (as the H200 does).
 */
#include "sc_internal.h"

hipError_t hipMemcpyAsync(void *dst, const void *src, size_t sizeBytes, hipMemcpyKind kind,
                          hipStream_t stream);
hipError_t hipMemsetAsync(void *dst, int value, size_t sizeBytes, hipStream_t stream);
hipError_t hipMemsetD32Async(hipDeviceptr_t dst, int value, size_t count, hipStream_t stream);
hipError_t hipStreamCreateWithPriority(hipStream_t *stream, unsigned int flags, int priority);
hipError_t hipStreamDestroy(hipStream_t stream);
hipError_t hipStreamSynchronize(hipStream_t stream);
hipError_t hipStreamQuery(hipStream_t stream);
hipError_t hipStreamBeginCapture(hipStream_t stream, hipStreamCaptureMode mode);
hipError_t hipStreamEndCapture(hipStream_t stream, hipGraph_t *pGraph);
hipError_t hipStreamIsCapturing(hipStream_t stream, hipStreamCaptureStatus *pCaptureStatus);
hipError_t hipThreadExchangeStreamCaptureMode(hipStreamCaptureMode *mode);
hipError_t hipEventCreateWithFlags(hipEvent_t *event, unsigned flags);
hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream);
hipError_t hipEventQuery(hipEvent_t event);
hipError_t hipEventSynchronize(hipEvent_t event);
hipError_t hipEventDestroy(hipEvent_t event);
hipError_t hipGraphInstantiate(hipGraphExec_t *pGraphExec, hipGraph_t graph,
                               hipGraphNode_t *pErrorNode, char *pLogBuffer, size_t bufferSize);
hipError_t hipGraphLaunch(hipGraphExec_t graphExec, hipStream_t stream);
hipError_t hipGraphExecDestroy(hipGraphExec_t graphExec);
hipError_t hipGraphDestroy(hipGraph_t graph);

hipStream_t sc_stream(CUstream h, bool ptsz)
{
    if (h == NULL)
        return ptsz ? hipStreamPerThread : NULL;
    if (h == CU_STREAM_LEGACY)
        return NULL;
    if (h == CU_STREAM_PER_THREAD)
        return hipStreamPerThread;
    return (hipStream_t)h;
}

CUresult sc_implicit_check(hipStream_t hs)
{
    if (hs != NULL)
        return CUDA_SUCCESS;
    CUresult e = CUDA_SUCCESS;
    int dev = sh_current_device();
    pthread_mutex_lock(&sh_dev_lock);
    for (struct sh_stream *s = sh_streams; s; s = s->next_all)
        if (s->capture && s->blocking && !s->is_null && s->device == dev) {
            e = CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
            /* The H200 also invalidates a global capture there, whatever
             * the calling thread's mode (tests/gpu/RESULTS.md). */
            if (s->capture->mode == hipStreamCaptureModeGlobal)
                s->capture->invalidated = true;
        }
    pthread_mutex_unlock(&sh_dev_lock);
    return e;
}

/* The common entry of calls that enqueue work on hs: context, 906, and
 * the driver lock's gate. */
static CUresult enter_enqueue(hipStream_t hs)
{
    CUresult e = sc_enter(true);
    if (e != CUDA_SUCCESS)
        return e;
    if ((e = sc_implicit_check(hs)) != CUDA_SUCCESS)
        return e;
    sc_drv_gate();
    return CUDA_SUCCESS;
}

/* ---- copies and memsets ------------------------------------------------- */

static CUresult copy(void *dst, const void *src, size_t n, hipMemcpyKind kind, CUstream h, bool ptsz)
{
    hipStream_t hs = sc_stream(h, ptsz);
    CUresult e = enter_enqueue(hs);
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
    CUresult e = enter_enqueue(hs);
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

/* ---- streams ------------------------------------------------------------ */

static CUresult stream_create(CUstream *ph, unsigned flags, int prio)
{
    CUresult e = sc_enter(true);
    if (e != CUDA_SUCCESS)
        return e;
    if (!ph || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
        return CUDA_ERROR_INVALID_VALUE;
    sc_drv_gate();
    hipStream_t s;
    e = sc_res(hipStreamCreateWithPriority(&s, flags, prio));
    if (e == CUDA_SUCCESS)
        *ph = (CUstream)s;
    return e;
}

CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
    return stream_create(phStream, Flags, 0);
}

CUresult cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority)
{
    return stream_create(phStream, flags, priority);
}

/* Returns at once; work already enqueued still completes. */
static CUresult stream_destroy(CUstream h)
{
    CUresult e = sc_enter(true);
    if (e != CUDA_SUCCESS)
        return e;
    if (h == NULL || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD)
        return CUDA_ERROR_INVALID_HANDLE;
    return sc_res(hipStreamDestroy((hipStream_t)h));
}

CUresult cuStreamDestroy(CUstream hStream)
{
    return stream_destroy(hStream);
}

CUresult cuStreamDestroy_v2(CUstream hStream)
{
    return stream_destroy(hStream);
}

static CUresult stream_sync(CUstream h, bool ptsz)
{
    CUresult e = sc_enter(true);
    if (e != CUDA_SUCCESS)
        return e;
    if (sc_in_host_fn())
        return CUDA_ERROR_NOT_PERMITTED;
    return sc_res(hipStreamSynchronize(sc_stream(h, ptsz)));
}

CUresult cuStreamSynchronize(CUstream hStream)
{
    return stream_sync(hStream, false);
}

CUresult cuStreamSynchronize_ptsz(CUstream hStream)
{
    return stream_sync(hStream, true);
}

static CUresult stream_query(CUstream h, bool ptsz)
{
    CUresult e = sc_enter(true);
    if (e != CUDA_SUCCESS)
        return e;
    return sc_res(hipStreamQuery(sc_stream(h, ptsz)));
}

CUresult cuStreamQuery(CUstream hStream)
{
    return stream_query(hStream, false);
}

CUresult cuStreamQuery_ptsz(CUstream hStream)
{
    return stream_query(hStream, true);
}

/* ---- host functions and callbacks ---------------------------------------- */

static CUresult enqueue_work(CUstream h, bool ptsz, struct sh_work *w)
{
    hipStream_t hs = sc_stream(h, ptsz);
    CUresult e = enter_enqueue(hs);
    if (e != CUDA_SUCCESS)
        return e;
    return sc_res(sh_enqueue_handle(hs, w, NULL, NULL));
}

static CUresult add_callback(CUstream h, CUstreamCallback cb, void *data, unsigned flags, bool ptsz)
{
    if (!cb || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    struct sh_work w = { .kind = W_CALLBACK, .cb = (hipStreamCallback_t)(void (*)(void))cb,
                         .handle = (hipStream_t)h, .arg = data };
    return enqueue_work(h, ptsz, &w);
}

CUresult cuStreamAddCallback(CUstream hStream, CUstreamCallback callback, void *userData,
                             unsigned int flags)
{
    return add_callback(hStream, callback, userData, flags, false);
}

CUresult cuStreamAddCallback_ptsz(CUstream hStream, CUstreamCallback callback, void *userData,
                                  unsigned int flags)
{
    return add_callback(hStream, callback, userData, flags, true);
}

static CUresult host_func(CUstream h, CUhostFn fn, void *data, bool ptsz)
{
    if (!fn)
        return CUDA_ERROR_INVALID_VALUE;
    struct sh_work w = { .kind = W_HOSTFN, .hfn = fn, .handle = (hipStream_t)h, .arg = data };
    return enqueue_work(h, ptsz, &w);
}

CUresult cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData)
{
    return host_func(hStream, fn, userData, false);
}

CUresult cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData)
{
    return host_func(hStream, fn, userData, true);
}

/* ---- the simcuda.h extension: C kernels and checked device accesses ------ */

CUresult simcuda_launch_kernel(CUstream hStream, simhipKernel_t fn, void *args);
void simcuda_device_read(void *dst, const void *src, size_t n);
void simcuda_device_write(void *dst, const void *src, size_t n);

CUresult simcuda_launch_kernel(CUstream hStream, simhipKernel_t fn, void *args)
{
    if (!fn)
        return CUDA_ERROR_INVALID_VALUE;
    struct sh_work w = { .kind = W_KERNEL, .kfn = fn, .arg = args, .handle = (hipStream_t)hStream };
    return enqueue_work(hStream, false, &w);
}

void simcuda_device_read(void *dst, const void *src, size_t n)
{
    sh_device_copy(dst, src, n, false, true);
}

void simcuda_device_write(void *dst, const void *src, size_t n)
{
    sh_device_copy(dst, src, n, true, false);
}

/* ---- events --------------------------------------------------------------- */

CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
    CUresult e = sc_enter(true);
    if (e != CUDA_SUCCESS)
        return e;
    if (!phEvent || (Flags & ~7u))
        return CUDA_ERROR_INVALID_VALUE;
    return sc_res(hipEventCreateWithFlags((hipEvent_t *)phEvent, Flags));
}

static CUresult event_record(CUevent ev, CUstream h, bool ptsz)
{
    hipStream_t hs = sc_stream(h, ptsz);
    CUresult e = enter_enqueue(hs);
    if (e != CUDA_SUCCESS)
        return e;
    return sc_res(hipEventRecord((hipEvent_t)ev, hs));
}

CUresult cuEventRecord(CUevent hEvent, CUstream hStream)
{
    return event_record(hEvent, hStream, false);
}

CUresult cuEventRecord_ptsz(CUevent hEvent, CUstream hStream)
{
    return event_record(hEvent, hStream, true);
}

CUresult cuEventQuery(CUevent hEvent)
{
    CUresult e = sc_enter(true);
    if (e != CUDA_SUCCESS)
        return e;
    return sc_res(hipEventQuery((hipEvent_t)hEvent));
}

CUresult cuEventSynchronize(CUevent hEvent)
{
    CUresult e = sc_enter(true);
    if (e != CUDA_SUCCESS)
        return e;
    if (sc_in_host_fn())
        return CUDA_ERROR_NOT_PERMITTED;
    return sc_res(hipEventSynchronize((hipEvent_t)hEvent));
}

CUresult cuEventDestroy(CUevent hEvent)
{
    CUresult e = sc_enter(true);
    if (e != CUDA_SUCCESS)
        return e;
    return sc_res(hipEventDestroy((hipEvent_t)hEvent));
}

CUresult cuEventDestroy_v2(CUevent hEvent)
{
    return cuEventDestroy(hEvent);
}

/* ---- capture -------------------------------------------------------------- */

static CUresult begin_capture(CUstream h, CUstreamCaptureMode mode, bool ptsz)
{
    CUresult e = sc_enter(true);
    if (e != CUDA_SUCCESS)
        return e;
    return sc_res(hipStreamBeginCapture(sc_stream(h, ptsz), (hipStreamCaptureMode)mode));
}

CUresult cuStreamBeginCapture(CUstream hStream)
{
    return begin_capture(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL, false);
}

CUresult cuStreamBeginCapture_ptsz(CUstream hStream)
{
    return begin_capture(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL, true);
}

CUresult cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)
{
    return begin_capture(hStream, mode, false);
}

CUresult cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode)
{
    return begin_capture(hStream, mode, true);
}

static CUresult end_capture(CUstream h, CUgraph *g, bool ptsz)
{
    CUresult e = sc_enter(true);
    if (e != CUDA_SUCCESS)
        return e;
    return sc_res(hipStreamEndCapture(sc_stream(h, ptsz), (hipGraph_t *)g));
}

CUresult cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
    return end_capture(hStream, phGraph, false);
}

CUresult cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph)
{
    return end_capture(hStream, phGraph, true);
}

/* On the legacy stream while a blocking stream captures: 906. */
static CUresult is_capturing(CUstream h, CUstreamCaptureStatus *st, bool ptsz)
{
    CUresult e = sc_enter(true);
    if (e != CUDA_SUCCESS)
        return e;
    hipStream_t hs = sc_stream(h, ptsz);
    if ((e = sc_implicit_check(hs)) != CUDA_SUCCESS)
        return e;
    return sc_res(hipStreamIsCapturing(hs, (hipStreamCaptureStatus *)st));
}

CUresult cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
    return is_capturing(hStream, captureStatus, false);
}

CUresult cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
    return is_capturing(hStream, captureStatus, true);
}

CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
    CUresult e = sc_enter(false);
    if (e != CUDA_SUCCESS)
        return e;
    return sc_res(hipThreadExchangeStreamCaptureMode((hipStreamCaptureMode *)mode));
}

/* ---- graphs --------------------------------------------------------------- */

CUresult cuGraphInstantiate(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode,
                            char *logBuffer, size_t bufferSize)
{
    CUresult e = sc_enter(true);
    if (e != CUDA_SUCCESS)
        return e;
    return sc_res(hipGraphInstantiate((hipGraphExec_t *)phGraphExec, (hipGraph_t)hGraph,
                                      (hipGraphNode_t *)phErrorNode, logBuffer, bufferSize));
}

CUresult cuGraphInstantiate_v2(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode,
                               char *logBuffer, size_t bufferSize)
{
    return cuGraphInstantiate(phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize);
}

CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph,
                                     unsigned long long flags)
{
    if (flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    return cuGraphInstantiate(phGraphExec, hGraph, NULL, NULL, 0);
}

static CUresult graph_launch(CUgraphExec x, CUstream h, bool ptsz)
{
    hipStream_t hs = sc_stream(h, ptsz);
    CUresult e = enter_enqueue(hs);
    if (e != CUDA_SUCCESS)
        return e;
    return sc_res(hipGraphLaunch((hipGraphExec_t)x, hs));
}

CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
    return graph_launch(hGraphExec, hStream, false);
}

CUresult cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
    return graph_launch(hGraphExec, hStream, true);
}

CUresult cuGraphExecDestroy(CUgraphExec hGraphExec)
{
    CUresult e = sc_enter(false);
    if (e != CUDA_SUCCESS)
        return e;
    return sc_res(hipGraphExecDestroy((hipGraphExec_t)hGraphExec));
}

CUresult cuGraphDestroy(CUgraph hGraph)
{
    CUresult e = sc_enter(false);
    if (e != CUDA_SUCCESS)
        return e;
    return sc_res(hipGraphDestroy((hipGraph_t)hGraph));
}

/* ---- synchronous copies and memsets ---------------------------------------
 * On the legacy stream (the per-thread stream in _ptds forms); they return
 * once the operation has run. */

hipError_t hipStreamGetFlags(hipStream_t stream, unsigned int *flags);
hipError_t hipStreamGetPriority(hipStream_t stream, int *priority);
hipError_t hipStreamWaitEvent(hipStream_t stream, hipEvent_t event, unsigned int flags);
hipError_t hipEventElapsedTime(float *ms, hipEvent_t start, hipEvent_t stop);

static CUresult copy_sync(void *dst, const void *src, size_t n, hipMemcpyKind kind, bool ptds,
                          const char *api)
{
    hipStream_t hs = ptds ? hipStreamPerThread : NULL;
    CUresult e = enter_enqueue(hs);
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
    CUresult e = enter_enqueue(hs);
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
    CUresult e = enter_enqueue(hs);
    if (e != CUDA_SUCCESS)
        return e;
    return sc_res(sh_fill(hs, DP(dst), v, 2, n, false, "cuMemsetD16Async"));
}

CUresult cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, CUstream h) { return fill16(d, v, n, h, false); }
CUresult cuMemsetD16Async_ptsz(CUdeviceptr d, unsigned short v, size_t n, CUstream h) { return fill16(d, v, n, h, true); }

/* ---- events and stream queries --------------------------------------------- */

/* Milliseconds between the two markers' execution. 600 before both ran;
 * 400 for an event never recorded or made without timing. */
CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end)
{
    CUresult e = sc_enter(true);
    if (e != CUDA_SUCCESS)
        return e;
    return sc_res(hipEventElapsedTime(ms, (hipEvent_t)start, (hipEvent_t)end));
}

CUresult cuEventElapsedTime_v2(float *ms, CUevent start, CUevent end)
{
    return cuEventElapsedTime(ms, start, end);
}

static CUresult record_flags(CUevent ev, CUstream h, unsigned flags, bool ptsz)
{
    if (flags & ~(unsigned)CU_EVENT_RECORD_EXTERNAL)
        return CUDA_ERROR_INVALID_VALUE;
    return event_record(ev, h, ptsz);
}

CUresult cuEventRecordWithFlags(CUevent ev, CUstream h, unsigned int flags) { return record_flags(ev, h, flags, false); }
CUresult cuEventRecordWithFlags_ptsz(CUevent ev, CUstream h, unsigned int flags) { return record_flags(ev, h, flags, true); }

/* Work enqueued on the stream afterwards waits for the event's marker. */
static CUresult wait_event(CUstream h, CUevent ev, unsigned flags, bool ptsz)
{
    if (flags & ~(unsigned)CU_EVENT_WAIT_EXTERNAL)
        return CUDA_ERROR_INVALID_VALUE;
    hipStream_t hs = sc_stream(h, ptsz);
    CUresult e = enter_enqueue(hs);
    if (e != CUDA_SUCCESS)
        return e;
    return sc_res(hipStreamWaitEvent(hs, (hipEvent_t)ev, 0));
}

CUresult cuStreamWaitEvent(CUstream h, CUevent ev, unsigned int flags) { return wait_event(h, ev, flags, false); }
CUresult cuStreamWaitEvent_ptsz(CUstream h, CUevent ev, unsigned int flags) { return wait_event(h, ev, flags, true); }

static CUresult stream_flags(CUstream h, unsigned *flags, bool ptsz)
{
    CUresult e = sc_enter(true);
    if (e != CUDA_SUCCESS)
        return e;
    return sc_res(hipStreamGetFlags(sc_stream(h, ptsz), flags));
}

CUresult cuStreamGetFlags(CUstream h, unsigned int *flags) { return stream_flags(h, flags, false); }
CUresult cuStreamGetFlags_ptsz(CUstream h, unsigned int *flags) { return stream_flags(h, flags, true); }

/* The priority given at creation, clamped to the H200's range [-5, 0]. */
static CUresult stream_priority(CUstream h, int *prio, bool ptsz)
{
    CUresult e = sc_enter(true);
    if (e != CUDA_SUCCESS)
        return e;
    if (!prio)
        return CUDA_ERROR_INVALID_VALUE;
    hipStream_t hs = sc_stream(h, ptsz);
    int p = 0;
    if (hs != NULL && hs != hipStreamPerThread) {
        pthread_mutex_lock(&sh_dev_lock);
        struct sh_stream *s = sh_stream_lookup_locked(hs);
        if (s)
            p = s->priority;
        pthread_mutex_unlock(&sh_dev_lock);
        if (!s)
            return CUDA_ERROR_INVALID_HANDLE;
    }
    *prio = p > 0 ? 0 : p < -5 ? -5 : p;
    return CUDA_SUCCESS;
}

CUresult cuStreamGetPriority(CUstream h, int *prio) { return stream_priority(h, prio, false); }
CUresult cuStreamGetPriority_ptsz(CUstream h, int *prio) { return stream_priority(h, prio, true); }
