/*
 * forkwatch.h - knowing, in a forked child, that no fork handler ran.
 *
 * fork() and the forks inside libc (daemon, system's older paths) run the
 * pthread_atfork handlers, and safepin's make the child whole (interpose/
 * fork.c). _Fork(), and a fork or clone made as a raw system call, run
 * none: the child inherits safepin's state as the parent's threads left
 * it at that instant, a lock held by a thread it does not have included.
 * A page mapped with MADV_WIPEONFORK reads zero in any child the kernel
 * copied the address space for, whatever made the fork: each entry into
 * safepin's lock looks at it (one load), and the first thread of such a
 * child to get there runs the child's recovery before going on (the lock
 * as it was at the fork: free, or held by a thread that is gone). A
 * clone that shares the address space (vfork, posix_spawn, threads) is
 * no fork and reads the page as its parent does.
 *
 * Without MADV_WIPEONFORK (Linux before 4.14) nothing is watched.
 * Dependencies: libc only. Callers: util/lock.c (the check),
 * interpose/ (init, the handlers).
 */
#ifndef SAFEPIN_FORKWATCH_H
#define SAFEPIN_FORKWATCH_H

#ifdef __cplusplus
extern "C" {
#endif

/* At start-up: maps the page. recover runs in a child that no fork handler
 * of safepin's saw, on the first thread to take safepin's lock there, with
 * the lock not held: lock_was_free says whether it was free at the fork. */
void sp_forkwatch_init(void (*recover)(int lock_was_free));

/* A fork handler of safepin's made this child whole (the child handler),
 * or this process is the one that mapped the page. */
void sp_forkwatch_seen(void);

/* The check (util/lock.c): 0 in a process safepin has seen. */
extern volatile int *sp_forkwatch_page;
void sp_forkwatch_recover(int lock_was_free);
__attribute__((no_sanitize_address)) static inline int sp_forkwatch_unseen(void)
{
    volatile int *p = sp_forkwatch_page;
    return p && __atomic_load_n(&p[0], __ATOMIC_ACQUIRE) == 0;
}

#ifdef __cplusplus
}
#endif
#endif
