/*
 * interpose.h - the process layer's entry points: its start, and the
 * logic behind each libc shim.
 *
 * Three names per hook: the exported shim (munmap, in shims.c), the real
 * function (sp_real.munmap, backend.h) and the logic (sp_munmap, here),
 * which tests call directly without LD_PRELOAD. A face's hooks (hip.h,
 * cuda_hooks.h) follow the same pattern with the face's own table. Runtime
 * hooks initialize the library (pthread_once); memory hooks never do:
 * until something is registered they are one predictable branch.
 */
#ifndef SAFEPIN_INTERPOSE_H
#define SAFEPIN_INTERPOSE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Idempotent: options, log, backend resolution, fork and exit handlers. */
void sp_init(void);

/* The logic of the libc hooks (mem_free.c, mem_mappings.c); their shims
 * are in shims.c. sp_mem_hooks_init hands libc's own free and munmap to
 * the core. */
void sp_mem_hooks_init(void);
void sp_free(void *p);
void *sp_realloc(void *p, size_t n);
int sp_munmap(void *addr, size_t len);
void *sp_mremap(void *old, size_t old_size, size_t new_size, int flags, void *new_addr);
int sp_madvise(void *addr, size_t len, int advice);
void *sp_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
int sp_shmdt(const void *addr);

/* Whether errno err of a failed libc hook lies in the program's arguments
 * (api-error) or describes the process or system (mem_mappings.c says which).
 * kind: the call's shape; addr, len: the range it names (NULL for a size
 * alone); flags: mmap's. errno is kept. */
enum { SP_FAULT_RANGE, SP_FAULT_ADVICE, SP_FAULT_MAP };
int sp_mem_fault(int kind, int err, const void *addr, size_t len, int flags);

/* dlclose: a runtime safepin has work for stays loaded until that work is
 * done; once it is unloaded, safepin forgets it (and uses the next one). */
int sp_dlclose(void *handle);
/* Fork child: forget the references safepin held (dlclose.c). */
void sp_backend_fork_child(void);
/* A fork begins (its first prepare handler, before the pending releases
 * are completed): the reaper's unload of a runtime library it held must
 * not run across the fork, which would leave the child the loader's state
 * half-changed, nor unload a library whose prepare handler is to run. Waits (bounded) for an unload in progress, and keeps new
 * ones off until sp_unload_fork_end (the parent) or the child's start
 * (sp_backend_fork_child). */
void sp_unload_fork_begin(void);
void sp_unload_fork_end(void);
/* The reaper's unload took the code at [lo, hi) away (under the unload
 * lock): a fork's wrapped prepare handler registered before and lying
 * there is not called (fork.c). */
void sp_fork_code_gone(uintptr_t lo, uintptr_t hi);

/* The exit drain, from an atexit handler registered once a runtime is in
 * use (cuda/): it then runs before the exit handlers the runtime registered
 * later (a static cudart's tears the context down). Idempotent. */
void sp_exit_drain_early(void);

/* End of run (registered with on_exit): drain, leaks, summary, report,
 * strict mode's exit status. */
void sp_at_exit(int status, void *arg);

/* Forks (fork.c): fork() is glibc's, whose handlers do safepin's work;
 * _Fork() runs safepin's handlers around glibc's; __register_atfork and
 * pthread_atfork wrap the prepare handler they are given (fork.c, "the
 * wrapped prepare handlers"). sp_fork_init, at start-up: the handlers and
 * the raw fork's watch. */
pid_t sp_fork(void);
pid_t sp_Fork(void);
int sp_register_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void),
                       void *dso);
void sp_fork_init(void);
/* 1 once sp_init is done. */
int sp_initialized(void);
/* The fork child: init.c's end-of-run state starts anew. */
void sp_exit_fork_child(void);

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
