/*
 * hip_ops.c - the HIP runtime's table (runtime.h): what the core calls in
 * HIP (through its table of real functions, sp_hip), its codes and its policy.
 */
#include "diag.h"
#include "streams.h"
#include "hip.h"
#include "runtime.h"

#include <stdint.h>
#include <string.h>

static int hip_present(void) { return sp_hip.hipEventCreateWithFlags != NULL; }

static int hip_record(void *s, void **ev)
{
    hipEvent_t e = NULL;
    hipError_t r = sp_hip.hipEventCreateWithFlags(&e, hipEventDisableTiming);
    if (r != hipSuccess)
        return (int)r;
    r = sp_hip.hipEventRecord(e, (hipStream_t)s);
    if (r != hipSuccess) {
        sp_hip.hipEventDestroy(e);
        return (int)r;
    }
    *ev = e;
    return 0;
}

static int hip_event_query(void *ev)
{
    return sp_hip.hipEventQuery ? (int)sp_hip.hipEventQuery((hipEvent_t)ev) : -1;
}

static int hip_event_sync(void *ev) { return (int)sp_hip.hipEventSynchronize((hipEvent_t)ev); }

static void hip_event_destroy(void *ev)
{
    if (sp_hip.hipEventDestroy)
        sp_hip.hipEventDestroy((hipEvent_t)ev);
}

static int hip_stream_query(void *s)
{
    return sp_hip.hipStreamQuery ? (int)sp_hip.hipStreamQuery((hipStream_t)s) : -1;
}

static int hip_stream_sync(void *s) { return (int)sp_hip.hipStreamSynchronize((hipStream_t)s); }

static void hip_stream_destroy(void *s)
{
    if (sp_hip.hipStreamDestroy)
        sp_hip.hipStreamDestroy((hipStream_t)s);
}

static int hip_stream_capturing(void *s, int *capturing)
{
    if (!sp_hip.hipStreamIsCapturing)
        return -1;
    hipStreamCaptureStatus st = hipStreamCaptureStatusNone;
    hipError_t e = sp_hip.hipStreamIsCapturing((hipStream_t)s, &st);
    if (e == hipSuccess)
        *capturing = st != hipStreamCaptureStatusNone;
    return (int)e;
}

static void hip_exchange_mode(int *mode)
{
    if (!sp_hip.hipThreadExchangeStreamCaptureMode)
        return;
    hipStreamCaptureMode m = (hipStreamCaptureMode)*mode;
    sp_hip.hipThreadExchangeStreamCaptureMode(&m);
    *mode = (int)m;
}

static int hip_get_place(void **place)
{
    int d = 0;
    if (!sp_hip.hipGetDevice || sp_hip.hipGetDevice(&d) != hipSuccess)
        return -1;
    *place = (void *)(intptr_t)d;
    return 0;
}

static int hip_set_place(void *place)
{
    return sp_hip.hipSetDevice ? (int)sp_hip.hipSetDevice((int)(intptr_t)place) : -1;
}

/* The device current at the call stays as it was (HIP unregisters on any). */
static int hip_unregister(void *place, void *p)
{
    (void)place;
    return (int)sp_hip.hipHostUnregister(p);
}

static int hip_mem_free(void *place, void *p)
{
    (void)place;
    return sp_hip.hipFree ? (int)sp_hip.hipFree(p) : (int)hipErrorNotInitialized;
}

/* The program's calls, as made. */
static int hip_host_unregister(void *p)
{
    return SP_REAL_HIP(hipHostUnregister) ? (int)sp_hip.hipHostUnregister(p)
                                          : (int)hipErrorHostMemoryNotRegistered;
}

static int hip_device_free(void *p)
{
    return SP_REAL_HIP(hipFree) ? (int)sp_hip.hipFree(p) : (int)hipErrorNotInitialized;
}

static int hip_device_count(void)
{
    int n = 0;
    if (!sp_hip.hipGetDeviceCount || sp_hip.hipGetDeviceCount(&n) != hipSuccess)
        return 1;
    return n;
}

static int hip_where(void **place, int *device)
{
    int d = 0;
    if (!sp_hip.hipGetDevice || sp_hip.hipGetDevice(&d) != hipSuccess)
        return -1;
    *place = (void *)(intptr_t)d;
    if (device)
        *device = d;
    return 0;
}

static int hip_knows(const void *p)
{
    if (!sp_hip.hipPointerGetAttributes)
        return 0;
    hipPointerAttribute_t a;
    memset(&a, 0, sizeof(a));
    return sp_hip.hipPointerGetAttributes(&a, p) == hipSuccess && (a.hostPointer || a.devicePointer);
}

/* The runtime's HIP_VERSION (major * 10000000 + minor * 100000 + patch),
 * asked once; 0 if it cannot say. */
static int hip_version(void)
{
    static int version = -1;
    int v = __atomic_load_n(&version, __ATOMIC_RELAXED);
    if (v < 0) {
        if (!sp_hip.hipRuntimeGetVersion || sp_hip.hipRuntimeGetVersion(&v) != hipSuccess || v < 0)
            v = 0;
        __atomic_store_n(&version, v, __ATOMIC_RELAXED);
    }
    return v;
}

/* 1 if attributes a (an answer of the real runtime) name device memory.
 * The memory-type values changed in HIP 6.0 (5.x: host 0, device 1; 6.x:
 * unregistered 0, host 1, device 2) within the same struct layout, so they
 * are read by the runtime's version. */
static int attr_is_device(const hipPointerAttribute_t *a)
{
    return (int)a->memoryType == (hip_version() >= 60000000 ? 2 : 1);
}

/* ROCm 5.6 made hipHostUnregister synchronize every stream of the device;
 * before, it finished the null stream only. */
static int hip_unregister_waits_all(void) { return hip_version() >= 50600000; }

static int hip_device_pointer(void *p)
{
    hipPointerAttribute_t a;
    memset(&a, 0, sizeof(a));
    return sp_hip.hipPointerGetAttributes && sp_hip.hipPointerGetAttributes(&a, p) == hipSuccess &&
           attr_is_device(&a) && a.devicePointer == p;
}

static const char *hip_code_name(int code)
{
    switch (code) {
    case hipErrorInvalidValue: return "hipErrorInvalidValue";
    case hipErrorOutOfMemory: return "hipErrorOutOfMemory";
    case hipErrorHostMemoryAlreadyRegistered: return "hipErrorHostMemoryAlreadyRegistered";
    case hipErrorHostMemoryNotRegistered: return "hipErrorHostMemoryNotRegistered";
    default: return "a HIP error";
    }
}

static const char *hip_error_name(int code)
{
    if (sp_tls_in_hostfn || !sp_hip.hipGetErrorName)
        return NULL;
    return sp_hip.hipGetErrorName((hipError_t)code);
}

static const int hip_state_errors[] = {
    hipErrorNotReady, hipErrorOutOfMemory, hipErrorNotInitialized, hipErrorDeinitialized,
    hipErrorIllegalAddress, hipErrorLaunchFailure, hipErrorLaunchTimeOut, hipErrorAssert,
    hipErrorStreamCaptureInvalidated, hipErrorUnknown, 0,
};

/* No hooked HIP call takes a device ordinal: an invalid device there is
 * the real runtime's answer on a machine with no GPU. */
static const int hip_no_device_errors[] = {hipErrorNoDevice, hipErrorInvalidDevice, 0};

/* What HIP lacks: no scan (its places are ordinals), nothing after a register. */
#define hip_scan_places NULL
#define hip_registered NULL
#define hip_entry_note NULL

/* What HIP does without safepin, by hazard (diag/hazards.inc), where
 * DESIGN section 3 knows it: the summary says it after "hazards prevented". */
static const char *const hip_hazard_bare[SP_HZ_COUNT] = {
    [SP_HZ_INFLIGHT_UNREGISTER] =
        "ROCm 5.2's unregister waits for the null stream only: work still running on a "
        "non-blocking stream faults (Page not present); 5.6+ blocks the caller until the "
        "whole device is idle",
    [SP_HZ_STALE_REGISTRATION] =
        "the runtime keeps the stale registration: device work can still write the freed "
        "memory, and a register of new memory at this address answers success with the old "
        "object (ROCm before 7)",
    [SP_HZ_HOSTFN_RELEASE] =
        "a runtime call from a host function can deadlock: it may wait for the stream that "
        "runs the host function",
    [SP_HZ_CAPTURE_RELEASE] =
        "the unregister answers 900 (hipErrorStreamCaptureUnsupported) and the range stays "
        "registered; from ROCm 6.2 the capture is invalidated too: its end answers 901 and "
        "gives no graph",
};

static const sp_rt_ops hip_ops = {
    SP_RT_NAMES("HIP", "hip", "the runtime's", "hipHostRegister",
                "hipHostUnregister", "hipFree"),
    SP_RT_CODES((int)hipErrorHostMemoryNotRegistered, (int)hipErrorHostMemoryAlreadyRegistered,
                (int)hipErrorInvalidValue, (int)hipErrorOutOfMemory, (int)hipErrorNotReady,
                (int)hipErrorStreamCaptureInvalidated,
                /* an interior unregister */ (int)hipErrorHostMemoryNotRegistered,
                /* a pending range's free in a host function */ (int)hipErrorInvalidValue,
                /* torn down */ -1),
    .hazard_bare = hip_hazard_bare,
    .state_errors = hip_state_errors,
    .no_device_errors = hip_no_device_errors,
    .mapped_flag = hipHostRegisterMapped,
    .null_stream = NULL, .per_thread_stream = (void *)hipStreamPerThread,
    /* policy (runtime.h) */
    .device_wide_unregister = 0, .runtime_refuses_overlap = 0,
    .nest_note = "", .defer_free_in_host_fn = 1,
    .defer_destroy_in_host_fn = 1, .serialize_queries = 1,
    .ordinal_places = 1, .place_current_for_events = 0,
    .null_stream_breaks_capture = 0,
    SP_RT_CALLS(hip),
};

void sp_hip_face_init(void)
{
    sp_hip_resolve();
    sp_rt_register(SP_RT_HIP, &hip_ops);
    sp_streams_init_places(SP_RT_HIP);
    if (hip_present())
        sp_diag_runtime_used(SP_RT_HIP);
}
