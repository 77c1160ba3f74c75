/*
 * simhip.h - the simulated device's extension API.
 *
 * simhip is a drop-in libamdhip64.so.5 whose device is software. This header
 * adds what HIP C code cannot express without a GPU compiler: a "kernel"
 * written in C, enqueued on a stream, that reads and writes memory through
 * device addresses. Every access is checked when the kernel executes, exactly
 * as hipMemcpyAsync and hipMemsetAsync are: bytes not covered by a live
 * registration (or a hipMalloc allocation) make the device fault.
 *
 * The functions are looked up at run time (dlsym), so a program that uses this
 * header still links against Debian's real libamdhip64 (which lacks them) and
 * runs unchanged on simhip. On a runtime without them, simhipLaunchKernel
 * returns hipErrorNotSupported.
 */
#ifndef SIMHIP_H
#define SIMHIP_H

#include <dlfcn.h>
#include <stddef.h>
#include <hip/hip_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A kernel: runs on the stream's worker thread, in stream order. */
typedef void (*simhipKernel_t)(void *args);

/* Exported by simhip (unversioned names, outside the hip_* version nodes). */
typedef hipError_t (*simhip_launch_fn)(hipStream_t, simhipKernel_t, void *);
typedef void (*simhip_access_fn)(void *, const void *, size_t);

static inline void *simhip_sym_(const char *name)
{
    return dlsym(RTLD_DEFAULT, name);
}

/* Enqueue fn(args) on stream (0, hipStreamPerThread or a created stream).
 * SIMHIP_OP_DELAY_US delays it like any device operation. During capture the
 * kernel becomes a graph node. */
static inline hipError_t simhipLaunchKernel(hipStream_t stream, simhipKernel_t fn,
                                            void *args)
{
    simhip_launch_fn f = (simhip_launch_fn)simhip_sym_("simhip_launch_kernel");
    return f ? f(stream, fn, args) : hipErrorNotSupported;
}

/* Inside a kernel: copy n bytes from device address src to local memory dst.
 * Faults (fault line + abort) unless every byte is device-accessible. */
static inline void simhipDeviceRead(void *dst, const void *src, size_t n)
{
    simhip_access_fn f = (simhip_access_fn)simhip_sym_("simhip_device_read");
    if (f)
        f(dst, src, n);
}

/* Inside a kernel: copy n bytes from local memory src to device address dst. */
static inline void simhipDeviceWrite(void *dst, const void *src, size_t n)
{
    simhip_access_fn f = (simhip_access_fn)simhip_sym_("simhip_device_write");
    if (f)
        f(dst, src, n);
}

/* simhip's own hipHostRegister, hipHostUnregister or hipHostGetDevicePointer,
 * reached past any interposer (dlsym, dlvsym and hipGetProcAddress all
 * hand out an interposer's shims): NULL for other names, or without simhip. */
static inline void *simhipRawFunction(const char *name)
{
    void *(*f)(const char *) = (void *(*)(const char *))simhip_sym_("simhip_raw_function");
    return f ? f(name) : NULL;
}

#ifdef __cplusplus
}
#endif
#endif /* SIMHIP_H */
