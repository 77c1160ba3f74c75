/*
 * event.c - events: created, recorded on a stream, queried, waited for,
 * timed, and waited on by a stream, over simhip's.
 */
#include "sc_internal.h"

hipError_t hipEventCreateWithFlags(hipEvent_t *event, unsigned flags);
hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream);
hipError_t hipEventQuery(hipEvent_t event);
hipError_t hipEventSynchronize(hipEvent_t event);
hipError_t hipEventDestroy(hipEvent_t event);
hipError_t hipEventElapsedTime(float *ms, hipEvent_t start, hipEvent_t stop);
hipError_t hipStreamWaitEvent(hipStream_t stream, hipEvent_t event, unsigned int flags);

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
    CUresult e = sc_enter_enqueue(hs);
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
    CUresult e = sc_enter_enqueue(hs);
    if (e != CUDA_SUCCESS)
        return e;
    return sc_res(hipStreamWaitEvent(hs, (hipEvent_t)ev, 0));
}

CUresult cuStreamWaitEvent(CUstream h, CUevent ev, unsigned int flags) { return wait_event(h, ev, flags, false); }
CUresult cuStreamWaitEvent_ptsz(CUstream h, CUevent ev, unsigned int flags) { return wait_event(h, ev, flags, true); }
