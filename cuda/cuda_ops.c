/*
 * cuda_ops.c - the CUDA driver's table (runtime.h): what the core calls in
 * CUDA, its codes (measured on the H200, DESIGN section 3) and its policy.
 * Places are contexts; the reaper thread has no context of its own, so
 * every call that needs one is made with the range's or the stream's
 * context current.
 */
#include "cuda_hooks.h"
#include "cuda_real.h"
#include "diag.h"
#include "interpose.h"
#include "runtime.h"
#include "streams.h"
#include "util.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

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

/* ---- the devices' primary contexts ------------------------------------------ */

/* Every device of the process, and its primary context's handle where it
 * is known (the program retained it: sp_cu_primary_seen; or the scan did).
 * Built once per process (pid: a forked child builds its own, and never
 * uses its parent's handles); slots are read and written atomically, the
 * block is never freed (a scan may still read an old one). */
typedef struct cu_devs {
    pid_t pid;
    int n;
    sp_CUdevice *dev;
    sp_CUcontext *prim;
} cu_devs;

static cu_devs *devs;

static cu_devs *cu_devs_get(void)
{
    cu_devs *d = __atomic_load_n(&devs, __ATOMIC_ACQUIRE);
    pid_t me = getpid();
    if (d && d->pid == me)
        return d;
    int n = 0;
    if (!sp_cu.cuDeviceGetCount || sp_cu.cuDeviceGetCount(&n) != SP_CUDA_SUCCESS || n < 1)
        return NULL;
    cu_devs *nd = sp_mem_calloc(1, sizeof(*nd) + (size_t)n * (sizeof(sp_CUdevice) + sizeof(sp_CUcontext)));
    if (!nd)
        return NULL;
    nd->pid = me;
    nd->n = n;
    nd->prim = (sp_CUcontext *)(nd + 1);
    nd->dev = (sp_CUdevice *)(nd->prim + n);
    for (int i = 0; i < n; i++)
        if (!sp_cu.cuDeviceGet || sp_cu.cuDeviceGet(&nd->dev[i], i) != SP_CUDA_SUCCESS)
            nd->dev[i] = i; /* the driver's device handles are the ordinals */
    if (__atomic_compare_exchange_n(&devs, &d, nd, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return nd; /* (a parent's block, if any, stays: never freed) */
    sp_mem_free(nd);
    return d && d->pid == me ? d : NULL;
}

void sp_cu_primary_seen(sp_CUdevice dev, sp_CUcontext ctx)
{
    /* (A retain succeeded: not in a host function, the driver initialized.) */
    cu_devs *d = ctx && !sp_tls_in_hostfn ? cu_devs_get() : __atomic_load_n(&devs, __ATOMIC_ACQUIRE);
    if (!d || d->pid != getpid())
        return;
    for (int i = 0; i < d->n; i++)
        if (d->dev[i] == dev)
            __atomic_store_n(&d->prim[i], ctx, __ATOMIC_RELEASE);
}

/* The primary context of every device where it is active now (asked of
 * the driver: cuDevicePrimaryCtxGetState), whether or not safepin saw a
 * call with it current: the program's kernels on its legacy or per-thread
 * streams are launched through calls safepin does not hook. An inactive
 * one is never retained (that would create a context the program never
 * made); an active one whose handle is not known yet is retained and
 * released at once (a count the program never sees; its handle is then
 * remembered). Writes up to cap handles; returns how many are active (more
 * than cap: call again with room), -1 if the driver cannot say. */
static int cu_scan_places(void **v, int cap)
{
    if (!sp_cu.cuDevicePrimaryCtxGetState)
        return -1;
    cu_devs *d = cu_devs_get();
    if (!d)
        return -1;
    sp_CUresult (*rel)(sp_CUdevice) = sp_cu.cuDevicePrimaryCtxRelease_v2
                                          ? sp_cu.cuDevicePrimaryCtxRelease_v2
                                          : sp_cu.cuDevicePrimaryCtxRelease;
    int k = 0;
    for (int i = 0; i < d->n; i++) {
        unsigned flags = 0;
        int active = 0;
        if (sp_cu.cuDevicePrimaryCtxGetState(d->dev[i], &flags, &active) != SP_CUDA_SUCCESS ||
            !active) {
            __atomic_store_n(&d->prim[i], NULL, __ATOMIC_RELEASE);
            continue;
        }
        sp_CUcontext c = __atomic_load_n(&d->prim[i], __ATOMIC_ACQUIRE);
        if (!c && sp_cu.cuDevicePrimaryCtxRetain && rel &&
            sp_cu.cuDevicePrimaryCtxRetain(&c, d->dev[i]) == SP_CUDA_SUCCESS) {
            rel(d->dev[i]);
            __atomic_store_n(&d->prim[i], c, __ATOMIC_RELEASE);
        }
        if (!c)
            continue;
        if (k < cap)
            v[k] = c;
        k++;
    }
    return k;
}

/* The program's calls, as made. */
static int cu_host_unregister(void *p)
{
    return SP_CU_REAL(cuMemHostUnregister) ? sp_cu.cuMemHostUnregister(p)
                                           : SP_CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
}

static int cu_device_free(void *p)
{
    return SP_CU_REAL(cuMemFree_v2) ? sp_cu.cuMemFree_v2((sp_CUdeviceptr)(uintptr_t)p)
                                    : SP_CUDA_ERROR_NOT_INITIALIZED;
}

static int cu_where(void **place, int *device)
{
    *place = sp_cu_current_ctx();
    if (device) {
        sp_CUdevice dev = 0;
        if (!sp_cu.cuCtxGetDevice || sp_cu.cuCtxGetDevice(&dev) != SP_CUDA_SUCCESS)
            dev = 0;
        *device = dev;
    }
    return 0;
}

/* 1 if the driver already knows p (cuMemHostAlloc, or registered where
 * safepin did not see it). */
static int cu_knows(const void *p)
{
    if (!sp_cu.cuPointerGetAttribute)
        return 0;
    unsigned type = 0;
    int e = sp_cu.cuPointerGetAttribute(&type, SP_CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                        (sp_CUdeviceptr)(uintptr_t)p);
    return e == SP_CUDA_SUCCESS && type != 0;
}

/* At the first registration the runtime above the driver (a static cudart)
 * has registered its exit handler, which destroys the context: an atexit
 * handler registered now runs before it, so the exit drain releases while
 * the driver still works (the H200 answered CUDA_ERROR_DEINITIALIZED to
 * releases drained after it). */
static void add_exit_drain(void) { atexit(sp_exit_drain_early); }

static void cu_registered(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, add_exit_drain);
}

static const char *cu_code_name(int code)
{
    switch (code) {
    case SP_CUDA_ERROR_INVALID_VALUE: return "CUDA_ERROR_INVALID_VALUE";
    case SP_CUDA_ERROR_OUT_OF_MEMORY: return "CUDA_ERROR_OUT_OF_MEMORY";
    case SP_CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED: return "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED";
    case SP_CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED: return "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED";
    case SP_CUDA_ERROR_NOT_PERMITTED: return "CUDA_ERROR_NOT_PERMITTED";
    default: return "a CUDA error";
    }
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

/* CUDA_ERROR_NO_DEVICE (an invalid device is an argument of the context
 * calls hooked: the program's to fix). */
static const int cu_no_device_errors[] = {100, 0};

/* cuMemHostUnregister waits for the whole device. */
static int cu_unregister_waits_all(void) { return 1; }

/* What the driver lacks: ordinal places (its places are contexts). */
#define cu_device_count NULL
#define cu_device_pointer NULL
#define cu_entry_note sp_cu_entry

/* What the CUDA driver does without safepin, by hazard (diag/hazards.inc),
 * where DESIGN section 3 knows it: the summary says it after "hazards
 * prevented". */
static const char *const cu_hazard_bare[SP_HZ_COUNT] = {
    [SP_HZ_INFLIGHT_UNREGISTER] =
        "the unregister blocks until the whole device is idle, holding the driver lock: "
        "other threads' launches stall meanwhile",
    [SP_HZ_STALE_REGISTRATION] =
        "the pages stay pinned: late device writes land in memory the process no longer "
        "sees, and a register at this address answers 712 until the old one is unregistered",
    [SP_HZ_HOSTFN_RELEASE] =
        "the unregister answers 800 (not permitted) and the range stays registered",
    [SP_HZ_CAPTURE_RELEASE] =
        "the unregister answers 900 (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED) and the range "
        "stays registered; the capture is invalidated: its end answers 901 and gives no "
        "graph",
};

static const sp_rt_ops cuda_ops = {
    SP_RT_NAMES("CUDA", "cu", "the driver's", "cuMemHostRegister",
                "cuMemHostUnregister", "cuMemFree_v2"),
    SP_RT_CODES(SP_CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, SP_CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
                SP_CUDA_ERROR_INVALID_VALUE, SP_CUDA_ERROR_OUT_OF_MEMORY, SP_CUDA_ERROR_NOT_READY,
                SP_CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
                /* an interior unregister */ SP_CUDA_ERROR_INVALID_VALUE,
                /* a pending range's free in a host function */ SP_CUDA_ERROR_NOT_PERMITTED,
                /* torn down */ SP_CUDA_ERROR_DEINITIALIZED),
    .hazard_bare = cu_hazard_bare,
    .state_errors = cu_state_errors,
    .no_device_errors = cu_no_device_errors,
    .mapped_flag = 0x02, /* CU_MEMHOSTREGISTER_DEVICEMAP */
    .null_stream = SP_CU_STREAM_LEGACY, .per_thread_stream = SP_CU_STREAM_PER_THREAD,
    /* policy (runtime.h) */
    .device_wide_unregister = 1, .runtime_refuses_overlap = 1,
    .nest_note = "; the bare driver answers 712 here", .defer_free_in_host_fn = 0,
    .defer_destroy_in_host_fn = 0, .serialize_queries = 0,
    .ordinal_places = 0, .place_current_for_events = 1,
    .null_stream_breaks_capture = 1,
    SP_RT_CALLS(cu),
};

void sp_cuda_face_init(void) { sp_rt_register(SP_RT_CUDA, &cuda_ops); }
