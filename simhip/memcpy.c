/*
 * memcpy.c - copies and memsets.
 *
 * A host side that is covered by a registration (or hipHostMalloc) at
 * enqueue time is accessed by the device when the op executes, and checked
 * then. A host side that is not ("pageable") is staged by the runtime: the
 * call waits for the stream to reach the copy, which then runs unchecked on
 * that side. hipMalloc memory is always checked. Memsets target device
 * addresses and are always checked when they execute.
 */
#include "internal.h"

static bool side_checked(const void *p, size_t n)
{
    return sh_mem_is_device(p) || sh_mem_covered(p, n);
}

void sh_copy_work(struct sh_work *w, void *dst, const void *src, size_t n)
{
    *w = (struct sh_work){ .kind = W_COPY, .dst = dst, .src = src, .n = n };
    w->check_dst = side_checked(dst, n);
    w->check_src = side_checked(src, n);
}

/* Enqueue w on stream; with sync, wait until it has run. */
static hipError_t enqueue_maybe_wait(hipStream_t stream, struct sh_work *w, bool sync,
                                     const char *api)
{
    uint64_t seq;
    struct sh_stream *s = NULL;
    hipError_t e = sh_enqueue_handle(stream, w, &seq, &s);
    if (s) {
        pthread_mutex_lock(&sh_dev_lock);
        if (e == hipSuccess && sync && seq)
            sh_wait_locked(s, seq, api);
        sh_stream_unref_locked(s);
        pthread_mutex_unlock(&sh_dev_lock);
    }
    return e;
}

hipError_t sh_copy(hipStream_t stream, void *dst, const void *src, size_t n, hipMemcpyKind kind,
                   bool sync, const char *api)
{
    if (n == 0)
        return hipSuccess;
    if (!dst || !src)
        return hipErrorInvalidValue;
    if ((unsigned)kind > (unsigned)hipMemcpyDefault)
        return hipErrorInvalidMemcpyDirection;
    struct sh_work w;
    sh_copy_work(&w, dst, src, n);
    if (!w.check_dst || !w.check_src)
        sync = true;
    return enqueue_maybe_wait(stream, &w, sync, api);
}

hipError_t sh_fill(hipStream_t stream, void *dst, int value, unsigned elem, size_t count,
                   bool sync, const char *api)
{
    if (count == 0)
        return hipSuccess;
    if (!dst)
        return hipErrorInvalidValue;
    struct sh_work w = { .kind = W_MEMSET, .dst = dst, .value = value, .elem = elem, .n = count };
    return enqueue_maybe_wait(stream, &w, sync, api);
}

hipError_t hipMemcpy(void *dst, const void *src, size_t sizeBytes, hipMemcpyKind kind)
{
    sh_init();
    return sh_ret(sh_copy(NULL, dst, src, sizeBytes, kind, true, "hipMemcpy"));
}

hipError_t hipMemcpyAsync(void *dst, const void *src, size_t sizeBytes, hipMemcpyKind kind,
                          hipStream_t stream)
{
    sh_init();
    return sh_ret(sh_copy(stream, dst, src, sizeBytes, kind, false, "hipMemcpyAsync"));
}

hipError_t hipMemset(void *dst, int value, size_t sizeBytes)
{
    sh_init();
    return sh_ret(sh_fill(NULL, dst, value, 1, sizeBytes, true, "hipMemset"));
}

hipError_t hipMemsetAsync(void *dst, int value, size_t sizeBytes, hipStream_t stream)
{
    sh_init();
    return sh_ret(sh_fill(stream, dst, value, 1, sizeBytes, false, "hipMemsetAsync"));
}

hipError_t hipMemsetD32Async(hipDeviceptr_t dst, int value, size_t count, hipStream_t stream)
{
    sh_init();
    return sh_ret(sh_fill(stream, dst, value, 4, count, false, "hipMemsetD32Async"));
}

hipError_t hipMemsetD8Async(hipDeviceptr_t dst, unsigned char value, size_t count,
                            hipStream_t stream)
{
    sh_init();
    return sh_ret(sh_fill(stream, dst, value, 1, count, false, "hipMemsetD8Async"));
}

hipError_t hipMemsetD16Async(hipDeviceptr_t dst, unsigned short value, size_t count,
                             hipStream_t stream)
{
    sh_init();
    return sh_ret(sh_fill(stream, dst, value, 2, count, false, "hipMemsetD16Async"));
}

hipError_t hipMemsetD8(hipDeviceptr_t dst, unsigned char value, size_t count)
{
    sh_init();
    return sh_ret(sh_fill(NULL, dst, value, 1, count, true, "hipMemsetD8"));
}

hipError_t hipMemsetD16(hipDeviceptr_t dst, unsigned short value, size_t count)
{
    sh_init();
    return sh_ret(sh_fill(NULL, dst, value, 2, count, true, "hipMemsetD16"));
}

hipError_t hipMemsetD32(hipDeviceptr_t dst, int value, size_t count)
{
    sh_init();
    return sh_ret(sh_fill(NULL, dst, value, 4, count, true, "hipMemsetD32"));
}

hipError_t hipMemcpyHtoD(hipDeviceptr_t dst, void *src, size_t n)
{
    sh_init();
    return sh_ret(sh_copy(NULL, dst, src, n, hipMemcpyHostToDevice, true, "hipMemcpyHtoD"));
}

hipError_t hipMemcpyDtoH(void *dst, hipDeviceptr_t src, size_t n)
{
    sh_init();
    return sh_ret(sh_copy(NULL, dst, src, n, hipMemcpyDeviceToHost, true, "hipMemcpyDtoH"));
}

hipError_t hipMemcpyDtoD(hipDeviceptr_t dst, hipDeviceptr_t src, size_t n)
{
    sh_init();
    return sh_ret(sh_copy(NULL, dst, src, n, hipMemcpyDeviceToDevice, true, "hipMemcpyDtoD"));
}

hipError_t hipMemcpyHtoDAsync(hipDeviceptr_t dst, void *src, size_t n, hipStream_t stream)
{
    sh_init();
    return sh_ret(sh_copy(stream, dst, src, n, hipMemcpyHostToDevice, false, "hipMemcpyHtoDAsync"));
}

hipError_t hipMemcpyDtoHAsync(void *dst, hipDeviceptr_t src, size_t n, hipStream_t stream)
{
    sh_init();
    return sh_ret(sh_copy(stream, dst, src, n, hipMemcpyDeviceToHost, false, "hipMemcpyDtoHAsync"));
}

hipError_t hipMemcpyDtoDAsync(hipDeviceptr_t dst, hipDeviceptr_t src, size_t n, hipStream_t stream)
{
    sh_init();
    return sh_ret(sh_copy(stream, dst, src, n, hipMemcpyDeviceToDevice, false, "hipMemcpyDtoDAsync"));
}

hipError_t hipMemcpyWithStream(void *dst, const void *src, size_t n, hipMemcpyKind kind,
                               hipStream_t stream)
{
    sh_init();
    return sh_ret(sh_copy(stream, dst, src, n, kind, true, "hipMemcpyWithStream"));
}
