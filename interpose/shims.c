/*
 * shims.c - the exported symbols, nothing else.
 *
 * Each shim is one call into the logic of hip_hooks.c / mem_hooks.c, which
 * unit tests call directly. This file is compiled with -fvisibility=hidden
 * and linked with libsafepin.map: only these names leave the library. An
 * unversioned definition here interposes libamdhip64's versioned symbols
 * (hipHostRegister@@hip_4.2) for every program started with LD_PRELOAD.
 */
#include "interpose.h"
#include "backend.h"
#include "registry.h"

#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <stdlib.h>
#include <sys/mman.h>

#define SP_EXPORT __attribute__((visibility("default"), no_sanitize_address))

/* A HIP hook runs with cancellation disabled. It keeps state across several
 * steps (the registry, a serialized runtime call, calls of safepin's own
 * into the runtime, some of them cancellation points); a thread cancelled
 * half-way would leave that state half-done, and other threads waiting on
 * it forever. A pending cancellation acts at the program's next
 * cancellation point after the hook returns (G9). */
#define SP_NOCANCEL(call)                                                      \
    do {                                                                       \
        int old_;                                                              \
        pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old_);                 \
        hipError_t e_ = (call);                                                \
        pthread_setcancelstate(old_, NULL);                                    \
        return e_;                                                             \
    } while (0)

SP_EXPORT hipError_t hipHostRegister(void *p, size_t size, unsigned int flags)
{
    SP_NOCANCEL(sp_host_register(p, size, flags));
}

SP_EXPORT hipError_t hipHostUnregister(void *p) { SP_NOCANCEL(sp_host_unregister(p)); }

SP_EXPORT hipError_t hipFree(void *p) { SP_NOCANCEL(sp_hip_free(p)); }

SP_EXPORT hipError_t hipPointerGetAttributes(hipPointerAttribute_t *attr, const void *p)
{
    SP_NOCANCEL(sp_pointer_get_attributes(attr, p));
}

SP_EXPORT hipError_t hipStreamCreate(hipStream_t *s) { SP_NOCANCEL(sp_stream_create(s)); }

SP_EXPORT hipError_t hipStreamCreateWithFlags(hipStream_t *s, unsigned int flags)
{
    SP_NOCANCEL(sp_stream_create_with_flags(s, flags));
}

SP_EXPORT hipError_t hipStreamCreateWithPriority(hipStream_t *s, unsigned int flags, int priority)
{
    SP_NOCANCEL(sp_stream_create_with_priority(s, flags, priority));
}

SP_EXPORT hipError_t hipStreamDestroy(hipStream_t s) { SP_NOCANCEL(sp_stream_destroy(s)); }

SP_EXPORT hipError_t hipStreamBeginCapture(hipStream_t s, hipStreamCaptureMode mode)
{
    SP_NOCANCEL(sp_stream_begin_capture(s, mode));
}

SP_EXPORT hipError_t hipStreamEndCapture(hipStream_t s, hipGraph_t *graph)
{
    SP_NOCANCEL(sp_stream_end_capture(s, graph));
}

SP_EXPORT hipError_t hipStreamAddCallback(hipStream_t s, hipStreamCallback_t cb, void *ud,
                                          unsigned int flags)
{
    SP_NOCANCEL(sp_stream_add_callback(s, cb, ud, flags));
}

SP_EXPORT hipError_t hipLaunchHostFunc(hipStream_t s, hipHostFn_t fn, void *ud)
{
    SP_NOCANCEL(sp_launch_host_func(s, fn, ud));
}

SP_EXPORT hipError_t hipGetProcAddress(const char *symbol, void **pfn, int version, uint64_t flags,
                                       int *status)
{
    SP_NOCANCEL(sp_get_proc_address(symbol, pfn, version, flags, status));
}

SP_EXPORT hipError_t hipMemcpyAsync(void *dst, const void *src, size_t n, hipMemcpyKind kind,
                                    hipStream_t stream)
{
    SP_NOCANCEL(sp_memcpy_async(dst, src, n, kind, stream));
}
SP_EXPORT hipError_t hipHostGetDevicePointer(void **dev, void *p, unsigned int flags)
{
    SP_NOCANCEL(sp_host_get_device_pointer(dev, p, flags));
}
SP_EXPORT hipError_t hipHostGetFlags(unsigned int *flags, void *p)
{
    SP_NOCANCEL(sp_host_get_flags(flags, p));
}
/* The common case inline: nothing registered, libc's free resolved: one
 * load, one branch and a tail jump, as cheap as a forwarding-only hook. */
SP_EXPORT void free(void *p)
{
    void (*f)(void *) = sp_real.free;
    if (__builtin_expect(sp_reg_empty() && f != NULL, 1)) {
        f(p);
        return;
    }
    sp_free(p);
}

SP_EXPORT void *realloc(void *p, size_t n) { return sp_realloc(p, n); }

SP_EXPORT int munmap(void *addr, size_t len) { return sp_munmap(addr, len); }

SP_EXPORT void *mremap(void *old, size_t old_size, size_t new_size, int flags, ...)
{
    void *new_addr = NULL;
    if (flags & (MREMAP_FIXED | MREMAP_DONTUNMAP)) {
        va_list ap;
        va_start(ap, flags);
        new_addr = va_arg(ap, void *);
        va_end(ap);
    }
    return sp_mremap(old, old_size, new_size, flags, new_addr);
}

SP_EXPORT int madvise(void *addr, size_t len, int advice) { return sp_madvise(addr, len, advice); }

SP_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return sp_mmap(addr, len, prot, flags, fd, off);
}

SP_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return sp_mmap(addr, len, prot, flags, fd, off);
}

SP_EXPORT void _exit(int status) { sp_exit_immediately(status); }

SP_EXPORT void _Exit(int status) { sp_exit_immediately(status); }

SP_EXPORT void quick_exit(int status) { sp_quick_exit(status); }

SP_EXPORT int shmdt(const void *addr) { return sp_shmdt(addr); }

/* dlclose of the runtime: kept loaded while safepin has work for it (real.c). */
SP_EXPORT int dlclose(void *handle) { return sp_dlclose(handle); }

/* dlsym(RTLD_NEXT) and dlsym(RTLD_DEFAULT) must reach glibc with the
 * caller's return address untouched (RTLD_NEXT is relative to the caller,
 * and sanitizer runtimes call it before anything of ours is initialized), so
 * on x86-64 the shim is a few instructions that jump, not call: special
 * handles go straight to the real dlsym (resolved on first use), real
 * handles to sp_dlsym with the caller's address as third argument. */
#if defined(__x86_64__)
__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym, @function\n"
        "dlsym:\n"
        "    cmpq $-1, %rdi\n"
        "    je 1f\n"
        "    testq %rdi, %rdi\n"
        "    je 1f\n"
        "    movq (%rsp), %rdx\n"
        "    jmp sp_dlsym\n"
        "1:  movq sp_dlsym_real_ptr(%rip), %rax\n"
        "    testq %rax, %rax\n"
        "    je 2f\n"
        "    jmp *%rax\n"
        "2:  pushq %rdi\n"
        "    pushq %rsi\n"
        "    subq $8, %rsp\n"
        "    call sp_dlsym_resolve_real\n"
        "    addq $8, %rsp\n"
        "    popq %rsi\n"
        "    popq %rdi\n"
        "    jmp *%rax\n"
        ".size dlsym, .-dlsym\n");
#else
SP_EXPORT void *dlsym(void *handle, const char *name)
{
    return sp_dlsym(handle, name, __builtin_return_address(0));
}
#endif

void *sp_shim_for(const char *name)
{
    static const struct {
        const char *name;
        void *fn;
    } shims[] = {
        {"hipHostRegister", (void *)hipHostRegister},
        {"hipHostUnregister", (void *)hipHostUnregister},
        {"hipFree", (void *)hipFree},
        {"hipPointerGetAttributes", (void *)hipPointerGetAttributes},
        {"hipStreamCreate", (void *)hipStreamCreate},
        {"hipStreamCreateWithFlags", (void *)hipStreamCreateWithFlags},
        {"hipStreamCreateWithPriority", (void *)hipStreamCreateWithPriority},
        {"hipStreamDestroy", (void *)hipStreamDestroy},
        {"hipStreamBeginCapture", (void *)hipStreamBeginCapture},
        {"hipStreamEndCapture", (void *)hipStreamEndCapture},
        {"hipStreamAddCallback", (void *)hipStreamAddCallback},
        {"hipLaunchHostFunc", (void *)hipLaunchHostFunc},
        {"hipGetProcAddress", (void *)hipGetProcAddress},
        {"hipMemcpyAsync", (void *)hipMemcpyAsync},
        {"hipHostGetDevicePointer", (void *)hipHostGetDevicePointer},
        {"hipHostGetFlags", (void *)hipHostGetFlags},
    };
    if (!name || name[0] != 'h')
        return NULL;
    for (size_t i = 0; i < sizeof(shims) / sizeof(shims[0]); i++)
        if (strcmp(shims[i].name, name) == 0)
            return shims[i].fn;
    return NULL;
}

__attribute__((constructor)) static void safepin_ctor(void) { sp_init(); }
