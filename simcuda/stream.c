/*
 * stream.c - streams, host functions and callbacks, the simcuda.h
 * extension's kernels and device accesses, over simhip's streams.
 *
 * Handles: NULL is the legacy stream (the per-thread stream in _ptsz
 * forms); CU_STREAM_LEGACY and CU_STREAM_PER_THREAD name them always. The
 * legacy stream waits for blocking and per-thread streams, never for
 * CU_STREAM_NON_BLOCKING ones (simhip's null-stream rules). Work on it
 * while a blocking stream of the device captures returns 906 and
 * invalidates a global capture (as the H200 does).
 */
#include "sc_internal.h"

hipError_t hipStreamCreateWithPriority(hipStream_t *stream, unsigned int flags, int priority);
hipError_t hipStreamDestroy(hipStream_t stream);
hipError_t hipStreamSynchronize(hipStream_t stream);
hipError_t hipStreamQuery(hipStream_t stream);
hipError_t hipStreamGetFlags(hipStream_t stream, unsigned int *flags);
hipError_t hipStreamGetPriority(hipStream_t stream, int *priority);

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
CUresult sc_enter_enqueue(hipStream_t hs)
{
    CUresult e = sc_enter(true);
    if (e != CUDA_SUCCESS)
        return e;
    if ((e = sc_implicit_check(hs)) != CUDA_SUCCESS)
        return e;
    sc_drv_gate();
    return CUDA_SUCCESS;
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
    CUresult e = sc_enter_enqueue(hs);
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

/* ---- stream queries --------------------------------------------------------- */

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
