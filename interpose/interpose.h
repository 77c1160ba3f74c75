/*
 * interpose.h - the logic behind each exported shim.
 *
 * Three names per hook: the exported shim (hipHostUnregister, in shims.c),
 * the real function (sp_real.hipHostUnregister, backend.h) and the logic
 * (sp_host_unregister, here), which tests call directly without LD_PRELOAD.
 * HIP hooks initialize the library (pthread_once); memory hooks never do:
 * until something is registered they are one predictable branch.
 */
#ifndef SAFEPIN_INTERPOSE_H
#define SAFEPIN_INTERPOSE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <hip/hip_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Idempotent: options, log, backend resolution, fork and exit handlers. */
void sp_init(void);

hipError_t sp_host_register(void *p, size_t size, unsigned int flags);
hipError_t sp_host_unregister(void *p);
hipError_t sp_hip_free(void *p);
hipError_t sp_pointer_get_attributes(hipPointerAttribute_t *attr, const void *p);

hipError_t sp_stream_create(hipStream_t *s);
hipError_t sp_stream_create_with_flags(hipStream_t *s, unsigned int flags);
hipError_t sp_stream_create_with_priority(hipStream_t *s, unsigned int flags, int priority);
hipError_t sp_stream_destroy(hipStream_t s);
hipError_t sp_stream_begin_capture(hipStream_t s, hipStreamCaptureMode mode);
hipError_t sp_stream_end_capture(hipStream_t s, hipGraph_t *graph);
hipError_t sp_stream_add_callback(hipStream_t s, hipStreamCallback_t cb, void *ud,
                                  unsigned int flags);
hipError_t sp_launch_host_func(hipStream_t s, hipHostFn_t fn, void *ud);
hipError_t sp_memcpy_async(void *dst, const void *src, size_t n, hipMemcpyKind kind,
                           hipStream_t stream);
hipError_t sp_host_get_device_pointer(void **dev, void *p, unsigned int flags);
hipError_t sp_host_get_flags(unsigned int *flags, void *p);
/* ROCm 6.2+: function pointers from the runtime; hooked names get the shim. */
hipError_t sp_get_proc_address(const char *symbol, void **pfn, int version, uint64_t flags,
                               int *status);

void sp_free(void *p);
void *sp_realloc(void *p, size_t n);
int sp_munmap(void *addr, size_t len);
void *sp_mremap(void *old, size_t old_size, size_t new_size, int flags, void *new_addr);
int sp_madvise(void *addr, size_t len, int advice);
void *sp_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
int sp_shmdt(const void *addr);

/* dlclose: a runtime safepin has work for stays loaded until that work is
 * done; once it is unloaded, safepin forgets it (and uses the next one). */
int sp_dlclose(void *handle);
/* Fork child: forget the reference safepin held (see real.c). */
void sp_backend_fork_child(void);

/* End of run (registered with on_exit): drain, leaks, summary, report,
 * strict mode's exit status. */
void sp_at_exit(int status, void *arg);

/* _exit/_Exit and quick_exit: the report and strict mode's exit status,
 * without the drain, then the real call. */
void sp_exit_immediately(int status) __attribute__((noreturn));
void sp_quick_exit(int status) __attribute__((noreturn));

/* 1 while the calling thread runs a host function of the program. */
int sp_in_host_function(void);

#ifdef __cplusplus
}
#endif
#endif
