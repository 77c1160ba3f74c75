/*
 * cuda_hooks.h - the logic behind each exported CUDA shim (cuda_shims.c),
 * callable from tests without LD_PRELOAD. Each takes the real function it
 * stands for where the driver has several forms (_v2, _ptsz), so one logic
 * serves every form and each form reaches its own real function.
 */
#ifndef SAFEPIN_CUDA_HOOKS_H
#define SAFEPIN_CUDA_HOOKS_H

#include "cuda_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The CUDA driver's slot (runtime.h). */
#define SP_RT_CUDA 1

/* Registers the CUDA table with the core (cuda_ops.c). Once, at start-up. */
void sp_cuda_face_init(void);

typedef sp_CUresult (*sp_cu_register_fn)(void *, size_t, unsigned int);
typedef sp_CUresult (*sp_cu_begin_fn)(sp_CUstream, int);
typedef sp_CUresult (*sp_cu_begin1_fn)(sp_CUstream);
typedef sp_CUresult (*sp_cu_end_fn)(sp_CUstream, sp_CUgraph *);
typedef sp_CUresult (*sp_cu_hostfn_fn)(sp_CUstream, sp_CUhostFn, void *);
typedef sp_CUresult (*sp_cu_callback_fn)(sp_CUstream, sp_CUstreamCallback, void *, unsigned int);
typedef sp_CUresult (*sp_cu_htod_fn)(sp_CUdeviceptr, const void *, size_t, sp_CUstream);
typedef sp_CUresult (*sp_cu_dtoh_fn)(void *, sp_CUdeviceptr, size_t, sp_CUstream);
typedef sp_CUresult (*sp_cu_ctx_fn)(sp_CUcontext);
typedef sp_CUresult (*sp_cu_dev_fn)(sp_CUdevice);
typedef sp_CUresult (*sp_cu_ctx_create_fn)(sp_CUcontext *, unsigned int, sp_CUdevice);
typedef sp_CUresult (*sp_cu_ctx_create3_fn)(sp_CUcontext *, void *, int, unsigned int, sp_CUdevice);
typedef sp_CUresult (*sp_cu_ctx_create4_fn)(sp_CUcontext *, void *, unsigned int, sp_CUdevice);
typedef sp_CUresult (*sp_cu_retain_fn)(sp_CUcontext *, sp_CUdevice);

/* memory, queries, copies (cuda_hooks.c) */
sp_CUresult sp_cu_host_register(sp_cu_register_fn real, const char *name, void *p, size_t size,
                                unsigned int flags);
sp_CUresult sp_cu_host_unregister(void *p);
sp_CUresult sp_cu_mem_free(sp_CUdeviceptr d);
sp_CUresult sp_cu_pointer_get_attribute(void *data, int attr, sp_CUdeviceptr ptr);
sp_CUresult sp_cu_pointer_get_attributes(unsigned int n, int *attrs, void **data, sp_CUdeviceptr ptr);
sp_CUresult sp_cu_host_get_device_pointer(sp_CUdeviceptr *d, void *p, unsigned int flags);
sp_CUresult sp_cu_host_get_flags(unsigned int *flags, void *p);
sp_CUresult sp_cu_memcpy_htod(sp_cu_htod_fn real, sp_CUdeviceptr dst, const void *src, size_t n,
                              sp_CUstream s);
sp_CUresult sp_cu_memcpy_dtoh(sp_cu_dtoh_fn real, void *dst, sp_CUdeviceptr src, size_t n,
                              sp_CUstream s);

/* streams, captures, host functions, contexts (cuda_streams.c) */
sp_CUresult sp_cu_stream_create(sp_CUstream *s, unsigned int flags, int priority, int with_priority);
sp_CUresult sp_cu_stream_destroy(sp_cu_begin1_fn real, sp_CUstream s);
/* ptsz: the _ptsz form, whose NULL stream is the calling thread's per-thread stream. */
sp_CUresult sp_cu_begin_capture(sp_cu_begin_fn real, sp_cu_begin1_fn real1, sp_CUstream s, int mode, int ptsz);
sp_CUresult sp_cu_end_capture(sp_cu_end_fn real, sp_CUstream s, sp_CUgraph *g, int ptsz);
/* cudaHostUnregister (cudart.c); caller: the program's return address. */
int sp_cudart_host_unregister(void *p, void *caller);
/* The program's dlsym(handle, "cudaHostUnregister") answered fn (cudart.c). */
void sp_cudart_offer(void *fn);
/* An object may be unloaded (the dlclose hook, before and after): forget
 * which definition each call site reached (cudart.c). */
void sp_cudart_forget(void);
sp_CUresult sp_cu_launch_host_func(sp_cu_hostfn_fn real, sp_CUstream s, sp_CUhostFn fn, void *ud);
sp_CUresult sp_cu_add_callback(sp_cu_callback_fn real, sp_CUstream s, sp_CUstreamCallback cb,
                               void *ud, unsigned int flags);
/* A context made by the program (cuCtxCreate, _v2: params NULL; _v3:
 * affinity params and their count; _v4: create params): the real call,
 * then the new context is one whose legacy stream markers cover. */
sp_CUresult sp_cu_ctx_create(sp_cu_ctx_create_fn real, sp_CUcontext *pctx, unsigned int flags,
                             sp_CUdevice dev);
sp_CUresult sp_cu_ctx_create_v3(sp_cu_ctx_create3_fn real, sp_CUcontext *pctx, void *params,
                                int nparams, unsigned int flags, sp_CUdevice dev);
sp_CUresult sp_cu_ctx_create_v4(sp_cu_ctx_create4_fn real, sp_CUcontext *pctx, void *params,
                                unsigned int flags, sp_CUdevice dev);
/* The program retains dev's primary context: the real call; its handle is
 * remembered (cuda_ops.c), so markers need no retain of safepin's own. */
sp_CUresult sp_cu_primary_ctx_retain(sp_cu_retain_fn real, sp_CUcontext *pctx, sp_CUdevice dev);
sp_CUresult sp_cu_ctx_destroy(sp_cu_ctx_fn real, sp_CUcontext ctx);
sp_CUresult sp_cu_primary_ctx_end(sp_cu_dev_fn real, sp_CUdevice dev, int reset);

/* look-ups (cuda_procaddr.c) */
sp_CUresult sp_cu_get_proc_address(const char *sym, void **pfn, int version, uint64_t flags,
                                   int *status, int five_args);
/* dlsym(handle, name) answered p: the shim to hand out instead, or NULL. */
void *sp_cuda_dlsym(void *handle, const char *name, void *p);
/* dlvsym(handle, name, version) answered p, the driver's default
 * definition of name: the shim to hand out instead, or NULL (also for the
 * runtime's cudaHostUnregister, whose shim does not call p). Completes
 * sp_cu from a real handle; no lock, no driver call. */
void *sp_cuda_dlvsym(void *handle, const char *name, void *p);

#ifdef __cplusplus
}
#endif
#endif
