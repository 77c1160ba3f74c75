/*
 * hip_ops.c - the HIP runtime's side of runtime.h: what the reaper and the
 * stream tracker call in HIP (through the backend table, sp_real).
 */
#include "internal.h"
#include "runtime.h"

#include <stdint.h>

static int hip_present(void) { return sp_real.hipEventCreateWithFlags != NULL; }

static int hip_record(void *s, void **ev)
{
    hipEvent_t e = NULL;
    hipError_t r = sp_real.hipEventCreateWithFlags(&e, hipEventDisableTiming);
    if (r != hipSuccess)
        return (int)r;
    r = sp_real.hipEventRecord(e, (hipStream_t)s);
    if (r != hipSuccess) {
        sp_real.hipEventDestroy(e);
        return (int)r;
    }
    *ev = e;
    return 0;
}

static int hip_event_query(void *ev)
{
    return sp_real.hipEventQuery ? (int)sp_real.hipEventQuery((hipEvent_t)ev) : -1;
}

static int hip_event_sync(void *ev) { return (int)sp_real.hipEventSynchronize((hipEvent_t)ev); }

static void hip_event_destroy(void *ev)
{
    if (sp_real.hipEventDestroy)
        sp_real.hipEventDestroy((hipEvent_t)ev);
}

static int hip_stream_query(void *s)
{
    return sp_real.hipStreamQuery ? (int)sp_real.hipStreamQuery((hipStream_t)s) : -1;
}

static int hip_stream_sync(void *s) { return (int)sp_real.hipStreamSynchronize((hipStream_t)s); }

static void hip_stream_destroy(void *s)
{
    if (sp_real.hipStreamDestroy)
        sp_real.hipStreamDestroy((hipStream_t)s);
}

static int hip_stream_capturing(void *s, int *capturing)
{
    if (!sp_real.hipStreamIsCapturing)
        return -1;
    hipStreamCaptureStatus st = hipStreamCaptureStatusNone;
    hipError_t e = sp_real.hipStreamIsCapturing((hipStream_t)s, &st);
    if (e == hipSuccess)
        *capturing = st != hipStreamCaptureStatusNone;
    return (int)e;
}

static void hip_exchange_mode(int *mode)
{
    if (!sp_real.hipThreadExchangeStreamCaptureMode)
        return;
    hipStreamCaptureMode m = (hipStreamCaptureMode)*mode;
    sp_real.hipThreadExchangeStreamCaptureMode(&m);
    *mode = (int)m;
}

static int hip_get_place(void **place)
{
    int d = 0;
    if (!sp_real.hipGetDevice || sp_real.hipGetDevice(&d) != hipSuccess)
        return -1;
    *place = (void *)(intptr_t)d;
    return 0;
}

static int hip_set_place(void *place)
{
    return sp_real.hipSetDevice ? (int)sp_real.hipSetDevice((int)(intptr_t)place) : -1;
}

/* The device current at the call stays as it was (HIP unregisters on any). */
static int hip_unregister(void *place, void *p)
{
    (void)place;
    return (int)sp_real.hipHostUnregister(p);
}

static int hip_mem_free(void *place, void *p)
{
    (void)place;
    return sp_real.hipFree ? (int)sp_real.hipFree(p) : (int)hipErrorNotInitialized;
}

static const char *hip_error_name(int code)
{
    if (sp_tls_in_hostfn || !sp_real.hipGetErrorName)
        return NULL;
    return sp_real.hipGetErrorName((hipError_t)code);
}

static const int hip_state_errors[] = {
    hipErrorNotReady, hipErrorOutOfMemory, hipErrorNotInitialized, hipErrorDeinitialized,
    hipErrorIllegalAddress, hipErrorLaunchFailure, hipErrorLaunchTimeOut, hipErrorAssert,
    hipErrorStreamCaptureInvalidated, hipErrorUnknown, 0,
};

const sp_rt_ops sp_hip_ops = {
    .name = "HIP",
    .unregister_name = "hipHostUnregister",
    .free_name = "hipFree",
    .null_stream = NULL,
    .device_wide_unregister = 0,
    .err_not_registered = (int)hipErrorHostMemoryNotRegistered,
    .err_gone = -1,
    .state_errors = hip_state_errors,
    .error_name = hip_error_name,
    .present = hip_present,
    .record = hip_record,
    .event_query = hip_event_query,
    .event_sync = hip_event_sync,
    .event_destroy = hip_event_destroy,
    .stream_query = hip_stream_query,
    .stream_sync = hip_stream_sync,
    .stream_destroy = hip_stream_destroy,
    .stream_capturing = hip_stream_capturing,
    .exchange_mode = hip_exchange_mode,
    .get_place = hip_get_place,
    .set_place = hip_set_place,
    .unregister = hip_unregister,
    .mem_free = hip_mem_free,
};
