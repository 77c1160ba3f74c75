/*
 * stack.h - the stack walk behind a site's capture: the same return
 * addresses as glibc's backtrace(), at a fraction of its cost.
 *
 * backtrace() goes through libgcc's unwinder, which finds and interprets a
 * frame's unwind table (.eh_frame CFI) anew for every frame of every call.
 * Here each return address's rule (where the caller's frame starts and
 * where the return address and %rbp were saved) is interpreted once from
 * the same CFI, kept in a lock-free table keyed by the address, and then
 * replayed: a few loads per frame. A frame the walk cannot replay exactly
 * (no CFI found, a CFA or register given by a DWARF expression as in signal
 * frames, a signal frame, anything unknown, a frame that does not check
 * out against the stack) makes sp_stack_walk answer -1, and the caller
 * uses backtrace() for the whole stack. x86-64 only; elsewhere always -1.
 *
 * Dependencies: none (libgcc's _Unwind_Find_FDE, looked up at init).
 * Callers: diag/ (sites.c: capture; diag.c: start), interpose/ (sp_stack_forget
 * after dlclose).
 */
#ifndef SAFEPIN_STACK_H
#define SAFEPIN_STACK_H

#ifdef __cplusplus
extern "C" {
#endif

/* Finds libgcc's FDE lookup; after backtrace() has loaded libgcc. Without
 * it every walk answers -1. Idempotent. */
void sp_stack_init(void);

/* The return addresses of the caller's stack into pc[0..max), as
 * backtrace(pc, max) called in place of this call would give them
 * (pc[0]: the return address into the caller). Returns the count, or -1
 * when the walk cannot vouch for the whole stack (use backtrace()). Reads
 * only the stack, never allocates, takes no lock; async-signal-safe once
 * the frames it meets are known. noinline: its own frame is the start. */
int sp_stack_walk(void **pc, int max);

/* Forget every rule learned: code may have been unloaded (dlclose), and
 * other code may be loaded at the same addresses. */
void sp_stack_forget(void);

#ifdef __cplusplus
}
#endif
#endif
