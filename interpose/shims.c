/*
 * shims.c - the exported symbols, nothing else.
 *
 * libc's: each shim is one call into the logic of mem_free.c and
 * mem_mappings.c (and init.c, dlclose.c, reach.c, dlvsym.c), which unit
 * tests call directly.
 * The runtimes' shims are their faces' (hip/hip_shims.c,
 * cuda/cuda_shims.c). Compiled with -fvisibility=hidden and linked with
 * libsafepin.map: only these names leave the library.
 */
#include "internal.h"
#include "face.h"
#include "runtime.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <stdlib.h>
#include <sys/mman.h>

#define SP_EXPORT __attribute__((visibility("default"), no_sanitize_address))

/* The common case inline: nothing registered, libc's free resolved: one
 * load, one branch and a tail jump, as cheap as a forwarding-only hook.
 * With ranges registered, a block the filter clears goes the same way. */
SP_EXPORT void free(void *p)
{
    void (*f)(void *) = sp_real.free;
    if (__builtin_expect(f != NULL, 1) &&
        __builtin_expect(sp_reg_empty() || sp_block_unrelated(p), 1)) {
        f(p);
        return;
    }
    sp_free(p);
}

/* A libc hook's refusal passes through; an api-error line when the fault
 * lies in the program's arguments (sp_mem_fault). */
#define SP_LIBC_FAILED(name, result, kind, a, len, flags, args)                          \
    sp_api_libc_failed(name, result, errno, sp_mem_fault(kind, errno, a, len, flags),  \
                       SP_API_ARGS args)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

SP_EXPORT void *realloc(void *p, size_t n)
{
    /* As free: nothing registered, libc's realloc resolved: straight to it. */
    void *(*f)(void *, size_t) = sp_real.realloc;
    void *q = __builtin_expect(f != NULL && (sp_reg_empty() || sp_block_unrelated(p)), 1)
                  ? f(p, n)
                  : sp_realloc(p, n);
    if (UNLIKELY(!q && n))
        SP_LIBC_FAILED("realloc", "NULL", SP_FAULT_RANGE, NULL, n, 0, (p, n));
    return q;
}

SP_EXPORT int munmap(void *addr, size_t len)
{
    int rc = sp_munmap(addr, len);
    if (UNLIKELY(rc != 0))
        SP_LIBC_FAILED("munmap", "-1", SP_FAULT_RANGE, addr, len, 0, (addr, len));
    return rc;
}

SP_EXPORT void *mremap(void *old, size_t old_size, size_t new_size, int flags, ...)
{
    void *new_addr = NULL;
    if (flags & (MREMAP_FIXED | MREMAP_DONTUNMAP)) {
        va_list ap;
        va_start(ap, flags);
        new_addr = va_arg(ap, void *);
        va_end(ap);
    }
    void *p = sp_mremap(old, old_size, new_size, flags, new_addr);
    if (UNLIKELY(p == MAP_FAILED))
        SP_LIBC_FAILED("mremap", "MAP_FAILED", SP_FAULT_RANGE, NULL, new_size, 0,
                       (old, old_size, new_size, (unsigned)flags, new_addr));
    return p;
}

SP_EXPORT int madvise(void *addr, size_t len, int advice)
{
    int rc = sp_madvise(addr, len, advice);
    if (UNLIKELY(rc != 0))
        SP_LIBC_FAILED("madvise", "-1", SP_FAULT_ADVICE, addr, len, 0, (addr, len, advice));
    return rc;
}

static void *mmap_checked(const char *name, void *addr, size_t len, int prot, int flags, int fd,
                          off_t off)
{
    void *p = sp_mmap(addr, len, prot, flags, fd, off);
    if (UNLIKELY(p == MAP_FAILED))
        SP_LIBC_FAILED(name, "MAP_FAILED", SP_FAULT_MAP,
                       (flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)) ? addr : NULL, len, flags,
                       (addr, len, prot, (unsigned)flags, fd, off));
    return p;
}

SP_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return mmap_checked("mmap", addr, len, prot, flags, fd, off);
}

SP_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return mmap_checked("mmap64", addr, len, prot, flags, fd, off);
}

SP_EXPORT void _exit(int status) { sp_exit_immediately(status); }

SP_EXPORT void _Exit(int status) { sp_exit_immediately(status); }

SP_EXPORT void quick_exit(int status) { sp_quick_exit(status); }

SP_EXPORT pid_t fork(void) { return sp_fork(); }

SP_EXPORT pid_t _Fork(void) { return sp_Fork(); }

/* Called by sanitizer runtimes while they initialize (TSan's interceptors):
 * no instrumentation on the way to glibc's. */
SP_EXPORT __attribute__((no_sanitize("thread"))) int
__register_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void), void *dso)
{
    return sp_register_atfork(prepare, parent, child, dso);
}

/* The old binaries' pthread_atfork@GLIBC_2.2.5 (newer ones call
 * __register_atfork from libc_nonshared.a's pthread_atfork). */
SP_EXPORT __attribute__((no_sanitize("thread"))) int
pthread_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void))
{
    return sp_register_atfork(prepare, parent, child, NULL);
}

SP_EXPORT int shmdt(const void *addr)
{
    int rc = sp_shmdt(addr);
    if (UNLIKELY(rc != 0))
        SP_LIBC_FAILED("shmdt", "-1", SP_FAULT_RANGE, addr, 0, 0, (addr));
    return rc;
}

/* dlclose of the runtime: kept loaded while safepin has work for it (real.c).
 * A handle the loader does not know (closed once too often) is the
 * program's error; the loader's message stays for the program's dlerror(). */
SP_EXPORT int dlclose(void *handle)
{
    int rc = sp_dlclose(handle);
    if (UNLIKELY(rc != 0))
        sp_api_libc_failed("dlclose", "nonzero (dlerror() says why)", 0, 1, SP_API_ARGS(handle));
    return rc;
}

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

/* dlvsym: the shim when glibc's answer is a hooked function (dlvsym.c),
 * else glibc's own dlvsym, reached by a jump with the caller's return
 * address untouched (RTLD_NEXT, RTLD_DEFAULT and dlerror()'s text are the
 * caller's). On x86-64 the export saves the three arguments, asks
 * sp_dlvsym_shim(handle, name, version, caller), returns a shim at once,
 * or restores the arguments and jumps to sp_dlvsym_pass()'s function (no
 * dlvsym at all in libc: NULL). */
#if defined(__x86_64__)
__asm__(".text\n"
        ".globl dlvsym\n"
        ".type dlvsym, @function\n"
        "dlvsym:\n"
        "    .cfi_startproc\n"         /* unwind information: backtraces pass through */
        "    pushq %rdi\n"
        "    .cfi_adjust_cfa_offset 8\n"
        "    pushq %rsi\n"
        "    .cfi_adjust_cfa_offset 8\n"
        "    pushq %rdx\n"            /* the stack is 16-byte aligned again */
        "    .cfi_adjust_cfa_offset 8\n"
        "    movq 24(%rsp), %rcx\n"   /* the caller's return address */
        "    call sp_dlvsym_shim\n"
        "    testq %rax, %rax\n"
        "    jne 1f\n"
        "    call sp_dlvsym_pass\n"
        "    testq %rax, %rax\n"
        "    je 1f\n"
        "    .cfi_remember_state\n"
        "    popq %rdx\n"
        "    .cfi_adjust_cfa_offset -8\n"
        "    popq %rsi\n"
        "    .cfi_adjust_cfa_offset -8\n"
        "    popq %rdi\n"
        "    .cfi_adjust_cfa_offset -8\n"
        "    jmp *%rax\n"
        "    .cfi_restore_state\n"
        "1:  addq $24, %rsp\n"
        "    .cfi_adjust_cfa_offset -24\n"
        "    ret\n"
        "    .cfi_endproc\n"
        ".size dlvsym, .-dlvsym\n");
#else
/* Elsewhere glibc sees safepin as the caller of what is passed through:
 * RTLD_NEXT look-ups start after safepin (docs/limits.md, every runtime). */
SP_EXPORT void *dlvsym(void *handle, const char *name, const char *version)
{
    void *shim = sp_dlvsym_shim(handle, name, version, __builtin_return_address(0));
    if (shim)
        return shim;
    void *(*real)(void *, const char *, const char *) = (void *(*)(void *, const char *, const char *))sp_dlvsym_pass();
    return real ? real(handle, name, version) : NULL;
}
#endif

/* An allocator preloaded before safepin (or linked into the program) answers
 * free() itself: safepin's hook is never reached, so freeing registered
 * memory (G2, G7) goes unseen. Said once, at start, in a process that has a
 * runtime to protect; never fatal. */
static void check_free_hooked(void)
{
    Dl_info mine, theirs;
    void *f = dlsym(RTLD_DEFAULT, "free");
    if (!f || !sp_faces_have_runtime() || !dladdr((void *)check_free_hooked, &mine) ||
        !dladdr(f, &theirs) || theirs.dli_fbase == mine.dli_fbase)
        return;
    sp_log(SP_LOG_WARN, "free-not-hooked",
           "free() resolves to %s, not to safepin (an allocator preloaded before safepin, or "
           "linked into the program): free and realloc of registered memory are not seen, so "
           "they are neither deferred nor reported; preload safepin first",
           theirs.dli_fname ? theirs.dli_fname : "another object");
}

__attribute__((constructor)) static void safepin_ctor(void)
{
    sp_init();
    check_free_hooked();
}
