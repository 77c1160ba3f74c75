/*
 * capture.c - stream capture and graphs (instantiated, launched,
 * destroyed), over simhip's.
 */
#include "sc_internal.h"

hipError_t hipStreamBeginCapture(hipStream_t stream, hipStreamCaptureMode mode);
hipError_t hipStreamEndCapture(hipStream_t stream, hipGraph_t *pGraph);
hipError_t hipStreamIsCapturing(hipStream_t stream, hipStreamCaptureStatus *pCaptureStatus);
hipError_t hipThreadExchangeStreamCaptureMode(hipStreamCaptureMode *mode);
hipError_t hipGraphInstantiate(hipGraphExec_t *pGraphExec, hipGraph_t graph,
                               hipGraphNode_t *pErrorNode, char *pLogBuffer, size_t bufferSize);
hipError_t hipGraphLaunch(hipGraphExec_t graphExec, hipStream_t stream);
hipError_t hipGraphExecDestroy(hipGraphExec_t graphExec);
hipError_t hipGraphDestroy(hipGraph_t graph);

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
    CUresult e = sc_enter_enqueue(hs);
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
