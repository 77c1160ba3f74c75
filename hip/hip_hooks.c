/*
 * hip_hooks.c - the HIP face's hooks: each makes sure the runtime has the
 * function, then hands the call to the core (core.h) with HIP's names and
 * the real function; what is HIP's own is here: hipPointerGetAttributes'
 * answer for a pending range, capture calls, and the callbacks' types.
 */
#include "api_error.h"
#include "interpose.h"
#include "streams.h"
#include "hip.h"
#include "core.h"
#include "runtime.h"

static const sp_call c_unregister = {"hipHostUnregister", NULL};
static const sp_call c_free = {"hipFree", NULL};

/* ---- memory ------------------------------------------------------------------ */

static int register_thunk(void *real, void *p, size_t size, unsigned flags)
{
    return (int)((hipError_t(*)(void *, size_t, unsigned))real)(p, size, flags);
}

hipError_t sp_host_register(void *p, size_t size, unsigned int flags)
{
    sp_init();
    if (!SP_REAL_HIP(hipHostRegister))
        return hipErrorNotInitialized;
    static const sp_call c = {"hipHostRegister", NULL};
    return (hipError_t)sp_core_register(SP_RT_HIP, &c, register_thunk,
                                        (void *)sp_hip.hipHostRegister, p, size, flags);
}

hipError_t sp_host_unregister(void *p)
{
    sp_init();
    return (hipError_t)sp_core_unregister(SP_RT_HIP, &c_unregister, p);
}

hipError_t sp_hip_free(void *p)
{
    sp_init();
    if (!SP_REAL_HIP(hipFree))
        return hipErrorNotInitialized;
    return (hipError_t)sp_core_device_free(SP_RT_HIP, &c_free, p);
}

/* ---- queries ------------------------------------------------------------------ */

hipError_t sp_pointer_get_attributes(hipPointerAttribute_t *attr, const void *p)
{
    sp_init();
    if (!SP_REAL_HIP(hipPointerGetAttributes))
        return hipErrorNotInitialized;
    /* With somewhere to answer, an error says the runtime does not know p:
     * programs ask that of any pointer (PyTorch, CuPy), not an api-error. */
    if (attr)
        sp_api_probe();
    if (!attr || !p)
        return sp_hip.hipPointerGetAttributes(attr, p);
    uint64_t tok;
    void *q = sp_core_query_begin(SP_RT_HIP, p, &tok);
    hipError_t e = sp_hip.hipPointerGetAttributes(attr, q);
    sp_core_query_end(tok);
    if (sp_core_is_probe(q)) {
        /* Unregistered for the program: as for memory never registered. */
        if (attr->hostPointer == q)
            attr->hostPointer = (void *)p;
        if (attr->devicePointer == q)
            attr->devicePointer = NULL;
    }
    return e;
}

hipError_t sp_host_get_device_pointer(void **dev, void *p, unsigned int flags)
{
    sp_init();
    if (!SP_REAL_HIP(hipHostGetDevicePointer))
        return hipErrorNotInitialized;
    /* As attribute queries: an error answers whether p is registered. */
    if (dev && flags == 0)
        sp_api_probe();
    uint64_t tok;
    void *q = sp_core_query_begin(SP_RT_HIP, p, &tok);
    hipError_t e = sp_hip.hipHostGetDevicePointer(dev, q, flags);
    sp_core_query_end(tok);
    if (e == hipSuccess)
        sp_core_note_use(p);
    return e;
}

hipError_t sp_host_get_flags(unsigned int *flags, void *p)
{
    sp_init();
    if (!SP_REAL_HIP(hipHostGetFlags))
        return hipErrorNotInitialized;
    if (flags)
        sp_api_probe(); /* as above */
    uint64_t tok;
    void *q = sp_core_query_begin(SP_RT_HIP, p, &tok);
    hipError_t e = sp_hip.hipHostGetFlags(flags, q);
    sp_core_query_end(tok);
    return e;
}

hipError_t sp_memcpy_async(void *dst, const void *src, size_t n, hipMemcpyKind kind,
                           hipStream_t stream)
{
    sp_init();
    if (!SP_REAL_HIP(hipMemcpyAsync))
        return hipErrorNotInitialized;
    sp_copy st;
    sp_core_copy_begin(SP_RT_HIP, dst, src, n, stream, &st);
    hipError_t e = sp_hip.hipMemcpyAsync(dst, src, n, kind, stream);
    sp_core_copy_end(SP_RT_HIP, &st, (int)e, stream);
    return e;
}

/* ---- streams and capture ----------------------------------------------------- */

hipError_t sp_stream_create(hipStream_t *s)
{
    sp_init();
    if (!SP_REAL_HIP(hipStreamCreate))
        return hipErrorNotInitialized;
    hipError_t e = sp_hip.hipStreamCreate(s);
    return s ? (hipError_t)sp_core_stream_created(SP_RT_HIP, (int)e, *s, 0) : e;
}

hipError_t sp_stream_create_with_flags(hipStream_t *s, unsigned int flags)
{
    sp_init();
    if (!SP_REAL_HIP(hipStreamCreateWithFlags))
        return hipErrorNotInitialized;
    hipError_t e = sp_hip.hipStreamCreateWithFlags(s, flags);
    return s ? (hipError_t)sp_core_stream_created(SP_RT_HIP, (int)e, *s, flags) : e;
}

hipError_t sp_stream_create_with_priority(hipStream_t *s, unsigned int flags, int priority)
{
    sp_init();
    if (!SP_REAL_HIP(hipStreamCreateWithPriority))
        return hipErrorNotInitialized;
    hipError_t e = sp_hip.hipStreamCreateWithPriority(s, flags, priority);
    return s ? (hipError_t)sp_core_stream_created(SP_RT_HIP, (int)e, *s, flags) : e;
}

hipError_t sp_stream_destroy(hipStream_t s)
{
    sp_init();
    if (!SP_REAL_HIP(hipStreamDestroy))
        return hipErrorNotInitialized;
    if (sp_core_stream_destroy(SP_RT_HIP, s))
        return hipSuccess;
    return sp_hip.hipStreamDestroy(s);
}

/* The real begin (arg: the mode) and end (arg: where the graph goes) of a
 * capture, made by the stream tracker. */
static int begin_call(void *s, void *mode)
{
    return (int)sp_hip.hipStreamBeginCapture(s, *(hipStreamCaptureMode *)mode);
}

static int end_call(void *s, void *graph) { return (int)sp_hip.hipStreamEndCapture(s, graph); }

hipError_t sp_stream_begin_capture(hipStream_t s, hipStreamCaptureMode mode)
{
    sp_init();
    if (!SP_REAL_HIP(hipStreamBeginCapture))
        return hipErrorNotSupported;
    return (hipError_t)sp_streams_begin_capture_rt(SP_RT_HIP, s, (int)mode, begin_call, &mode);
}

hipError_t sp_stream_end_capture(hipStream_t s, hipGraph_t *graph)
{
    sp_init();
    if (!SP_REAL_HIP(hipStreamEndCapture))
        return hipErrorNotSupported;
    return (hipError_t)sp_streams_end_capture_rt(SP_RT_HIP, s, end_call, graph);
}

/* ---- host functions ---------------------------------------------------------- */

hipError_t sp_launch_host_func(hipStream_t s, hipHostFn_t fn, void *ud)
{
    sp_init();
    if (!SP_REAL_HIP(hipLaunchHostFunc))
        return hipErrorNotSupported;
    void *arg = NULL;
    sp_host_fn t = sp_core_host_fn(SP_RT_HIP, s, fn, ud, &arg);
    if (!t)
        return sp_hip.hipLaunchHostFunc(s, fn, ud);
    hipError_t e = sp_hip.hipLaunchHostFunc(s, t, arg);
    if (e != hipSuccess)
        sp_core_host_fn_failed(arg);
    return e;
}

hipError_t sp_stream_add_callback(hipStream_t s, hipStreamCallback_t cb, void *ud,
                                  unsigned int flags)
{
    sp_init();
    if (!SP_REAL_HIP(hipStreamAddCallback))
        return hipErrorNotInitialized;
    void *arg = NULL;
    sp_stream_cb t = sp_core_stream_cb(SP_RT_HIP, s, (sp_stream_cb)(void (*)(void))cb, ud, &arg);
    if (!t)
        return sp_hip.hipStreamAddCallback(s, cb, ud, flags);
    hipError_t e = sp_hip.hipStreamAddCallback(s, (hipStreamCallback_t)(void (*)(void))t, arg, flags);
    if (e != hipSuccess)
        sp_core_host_fn_failed(arg);
    return e;
}
