/*
 * cuda_ops.c - the CUDA driver's side of runtime.h: what the reaper and the
 * stream tracker call in CUDA. Places are contexts; the reaper thread has
 * no context of its own, so every call that needs one is made with the
 * range's or the stream's context current.
 */
#include "cuda_real.h"
#include "runtime.h"
#include "streams.h"

extern __thread int sp_tls_in_hostfn __attribute__((tls_model("initial-exec")));

static int cu_present(void) { return sp_cu_active(); }

static int cu_record(void *s, void **ev)
{
    sp_CUevent e = NULL;
    int r = sp_cu.cuEventCreate(&e, SP_CU_EVENT_DISABLE_TIMING);
    if (r != SP_CUDA_SUCCESS)
        return r;
    r = sp_cu.cuEventRecord(e, s);
    if (r != SP_CUDA_SUCCESS) {
        sp_cu.cuEventDestroy_v2(e);
        return r;
    }
    *ev = e;
    return 0;
}

static int cu_event_query(void *ev) { return sp_cu.cuEventQuery(ev); }
static int cu_event_sync(void *ev) { return sp_cu.cuEventSynchronize(ev); }

static void cu_event_destroy(void *ev)
{
    if (sp_cu.cuEventDestroy_v2)
        sp_cu.cuEventDestroy_v2(ev);
}

static int cu_stream_query(void *s) { return sp_cu.cuStreamQuery ? sp_cu.cuStreamQuery(s) : -1; }
static int cu_stream_sync(void *s) { return sp_cu.cuStreamSynchronize(s); }

static void cu_stream_destroy(void *s)
{
    if (sp_cu.cuStreamDestroy_v2)
        sp_cu.cuStreamDestroy_v2(s);
    else if (sp_cu.cuStreamDestroy)
        sp_cu.cuStreamDestroy(s);
}

static int cu_stream_capturing(void *s, int *capturing)
{
    if (!sp_cu.cuStreamIsCapturing)
        return -1;
    int st = SP_CU_STREAM_CAPTURE_STATUS_NONE;
    int e = sp_cu.cuStreamIsCapturing(s, &st);
    if (e == SP_CUDA_SUCCESS)
        *capturing = st != SP_CU_STREAM_CAPTURE_STATUS_NONE;
    return e;
}

static void cu_exchange_mode(int *mode)
{
    if (sp_cu.cuThreadExchangeStreamCaptureMode)
        sp_cu.cuThreadExchangeStreamCaptureMode(mode);
}

static int cu_get_place(void **place)
{
    if (!sp_cu.cuCtxGetCurrent)
        return -1;
    return sp_cu.cuCtxGetCurrent(place);
}

static int cu_set_place(void *place) { return sp_cu.cuCtxSetCurrent ? sp_cu.cuCtxSetCurrent(place) : -1; }

/* The real unregister with the range's context current (and the calling
 * thread's context restored), in relaxed capture mode. */
static int cu_unregister(void *place, void *p)
{
    sp_CUcontext saved = NULL;
    int have = place && cu_get_place(&saved) == 0 && saved != place && cu_set_place(place) == 0;
    int old = sp_relaxed_enter();
    int e = sp_cu.cuMemHostUnregister(p);
    sp_relaxed_leave(old);
    if (have)
        cu_set_place(saved);
    return e;
}

static int cu_mem_free(void *place, void *p)
{
    sp_CUcontext saved = NULL;
    int have = place && cu_get_place(&saved) == 0 && saved != place && cu_set_place(place) == 0;
    int e = sp_cu.cuMemFree_v2 ? sp_cu.cuMemFree_v2((sp_CUdeviceptr)(uintptr_t)p)
                               : SP_CUDA_ERROR_NOT_INITIALIZED;
    if (have)
        cu_set_place(saved);
    return e;
}

static const char *cu_error_name(int code)
{
    const char *name = NULL;
    if (sp_tls_in_hostfn || !sp_cu.cuGetErrorName ||
        sp_cu.cuGetErrorName(code, &name) != SP_CUDA_SUCCESS)
        return NULL;
    return name;
}

static const int cu_state_errors[] = {
    SP_CUDA_ERROR_NOT_READY, SP_CUDA_ERROR_OUT_OF_MEMORY, SP_CUDA_ERROR_NOT_INITIALIZED,
    SP_CUDA_ERROR_DEINITIALIZED, SP_CUDA_ERROR_ILLEGAL_ADDRESS, SP_CUDA_ERROR_LAUNCH_FAILED,
    SP_CUDA_ERROR_LAUNCH_TIMEOUT, SP_CUDA_ERROR_ASSERT, SP_CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
    SP_CUDA_ERROR_UNKNOWN, 0,
};

const sp_rt_ops sp_cuda_ops = {
    .name = "CUDA",
    .unregister_name = "cuMemHostUnregister",
    .free_name = "cuMemFree_v2",
    .null_stream = SP_CU_STREAM_LEGACY,
    .device_wide_unregister = 1,
    .err_not_registered = SP_CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED,
    .err_gone = SP_CUDA_ERROR_DEINITIALIZED,
    .state_errors = cu_state_errors,
    .error_name = cu_error_name,
    .present = cu_present,
    .record = cu_record,
    .event_query = cu_event_query,
    .event_sync = cu_event_sync,
    .event_destroy = cu_event_destroy,
    .stream_query = cu_stream_query,
    .stream_sync = cu_stream_sync,
    .stream_destroy = cu_stream_destroy,
    .stream_capturing = cu_stream_capturing,
    .exchange_mode = cu_exchange_mode,
    .get_place = cu_get_place,
    .set_place = cu_set_place,
    .unregister = cu_unregister,
    .mem_free = cu_mem_free,
};
