/*
 * ownstack.h - a stack of safepin's own, for the work that needs stack.
 *
 * A hook runs on the program's thread, whose stack may be as small as
 * PTHREAD_STACK_MIN (16 KiB): thread pools often give their threads no
 * more. A diagnostic symbolizes frames, formats lines and writes reports;
 * that needs tens of KiB (DESIGN G12). So that work runs on a stack that
 * safepin maps once at start-up (sp_ownstack_init, from sp_init) and never
 * unmaps: a hook only captures its stack (sp_site_capture, a few hundred
 * bytes) and switches.
 *
 * One stack, used by one thread at a time (a lock): a second thread waits
 * for it. Safe because what runs on it takes only diag's leaf locks (the
 * symbolizer's, the kept violations', the suppressions'), which nothing
 * holds while it waits for this stack: every path that takes them runs on
 * this stack. A call from code already on this stack, or from a signal
 * handler that interrupted this thread while it held or was taking the
 * stack, runs where it is (no deadlock on itself). x86-64 and aarch64
 * switch with a few instructions of assembly with their unwind rules
 * (backtrace(), gdb and the sanitizers' unwinders cross the switch);
 * elsewhere, and before sp_ownstack_init, fn runs on the caller's stack.
 * ASan is told of each switch (its fiber interface).
 *
 * Dependencies: libc only. Callers: diag/ (the log, diagnostics, the
 * report, the post-mortem), runtime/ (api-error), interpose/ (init, fork).
 */
#ifndef SAFEPIN_OWNSTACK_H
#define SAFEPIN_OWNSTACK_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Usable bytes of the stack: enough for a diagnostic with backtrace=64 and
 * the report (sanitizer builds use more stack per frame). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SP_OWNSTACK_SIZE (2u << 20)
#else
#define SP_OWNSTACK_SIZE (256u << 10)
#endif

/* Maps the stack (with a guard page below it), once; idempotent. Called at
 * start-up, never from a hook. Without it (mapping failed, or never
 * called) sp_call_on_own_stack calls fn where it is. */
void sp_ownstack_init(void);

/* fn(arg) on safepin's stack; returns when fn has returned. Waits while
 * another thread uses the stack; runs fn in place when this thread already
 * holds it (nested, or a signal handler that interrupted it). Cancellation
 * is disabled while fn runs. fn must return normally (no longjmp out). */
void sp_call_on_own_stack(void (*fn)(void *), void *arg);

/* The same, but fn runs where it is when another thread holds the stack:
 * for a fatal signal's handler, whose thread must never wait for one that
 * may itself be waiting for it (the post-mortem), and whose own work is
 * written for small stacks. */
void sp_call_on_own_stack_if_free(void (*fn)(void *), void *arg);

/* Forked child: the lock is free (the thread that held it, if any, is not
 * in the child). The calling thread's own state is kept: a fork from a
 * signal handler that interrupted this thread's use of the stack goes on
 * using it. */
void sp_ownstack_fork_child(void);

/* 1 while the calling thread holds safepin's stack (or is taking it): what
 * runs there is safepin's own work, and the memory hooks pass it through
 * (libc's fclose() frees through the exported free, for instance) as they
 * do for code under the process lock; it must never wait for that lock,
 * which a thread waiting for this stack may hold. Initial-exec TLS, inlined
 * into the memory hooks. */
extern __thread int sp_ownstack_tls __attribute__((tls_model("initial-exec")));
__attribute__((no_sanitize_address)) static inline int sp_ownstack_held(void)
{
    return sp_ownstack_tls;
}

/* 1 if p lies in safepin's stack (tests, diagnostics of the stack itself). */
int sp_ownstack_contains(const void *p);

#ifdef __cplusplus
}
#endif
#endif
