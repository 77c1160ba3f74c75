/*
 * util.h - the small utilities every folder may use: allocation that
 * bypasses safepin's own free hook, the monotonic clock, and the address
 * span of a loaded object.
 *
 * Dependencies: libc only. Callers: every other folder.
 */
#ifndef SAFEPIN_UTIL_H
#define SAFEPIN_UTIL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Allocation that bypasses safepin's own free hook (glibc's __libc_*). */
void *sp_mem_alloc(size_t n);
void *sp_mem_calloc(size_t n, size_t sz);
void sp_mem_free(void *p);
/* Starts glibc's allocator, once, before any of the above is used: glibc
 * starts it at its first call, without a lock, and where a sanitizer's
 * malloc answers the program that first call is safepin's. Threads that
 * raced into it each take the main arena uncounted, and the second to end
 * aborts (__malloc_arena_thread_freeres: a->attached_threads > 0).
 * Called from safepin's start, which runs before the program's threads. */
void sp_mem_init(void);

/* Testing only (an addition to the original contract): while fn is set, an
 * allocation of n bytes through sp_mem_alloc/sp_mem_calloc fails when fn(n)
 * returns nonzero. NULL turns it off. Lets unit tests reach OOM paths. */
typedef int (*sp_mem_fail_fn)(size_t n);
void sp_mem_set_fail_hook(sp_mem_fail_fn fn);

/* Testing only: faults injected by SAFEPIN_TEST_FAIL (testfail.c). 1 when
 * this attempt must fail. */
typedef enum sp_test_fail_what { SP_TF_ALLOC, SP_TF_THREAD, SP_TF_UNLOAD, SP_TF_COUNT } sp_test_fail_what;
int sp_test_fail(sp_test_fail_what w);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t sp_now_ns(void);

/* The calling thread's id (gettid), asked of the kernel once per thread:
 * sites and history record it on every register and unregister, where a
 * system call each time is most of an idle unregister=async call's own
 * cost. A forked child's thread asks again (sp_gettid_fork_child, from the
 * fork handler, before anything else runs in the child). */
int sp_gettid(void);
void sp_gettid_fork_child(void);

/* > 0 while the calling thread runs a host function of the program (a
 * stream callback or a launched host function, through core/'s
 * trampolines): the runtime's own thread, which must not wait for device
 * work, and where safepin makes no runtime call. Initial-exec TLS: read by
 * the memory hooks, which must not call __tls_get_addr. */
/* The system's page size (sysconf, asked once). */
size_t sp_page_size(void);

/* libc's own free and munmap, for what the core frees or unmaps for the
 * program (deferred actions): interpose/ sets them at start-up (sp_libc_set).
 * Unset, a free leaks the block (safer than handing it to an allocator that
 * may not own it) and munmap is the system call. */
void sp_libc_set(void (*free_fn)(void *), int (*munmap_fn)(void *, size_t));
void sp_libc_free(void *p);
int sp_libc_munmap(void *addr, size_t len);

extern __thread int sp_tls_in_hostfn __attribute__((tls_model("initial-exec")));

/* The span [*lo, *hi) of an object's loadable segments (dl_iterate_phdr's
 * info) whose flags include all of flags (0: every segment, PF_X: its
 * code); 0 if it has none. */
struct dl_phdr_info;
int sp_phdr_span(const struct dl_phdr_info *info, unsigned flags, uintptr_t *lo, uintptr_t *hi);

#ifdef __cplusplus
}
#endif
#endif
