/*
 * maps.h - what the process's mappings say of a range, without touching it.
 *
 * A pinning runtime refuses a range it cannot pin: one with unmapped pages,
 * PROT_NONE pages, or read-only pages without its read-only flag. safepin
 * asks this before it answers a register with a code of its own (G10: the
 * runtime's refusal comes first), so that the program gets the runtime's
 * code. Read from /proc/self/maps; nothing is pinned, read or written.
 *
 * Dependencies: libc only. Callers: interpose/, cuda/.
 */
#ifndef SAFEPIN_MAPS_H
#define SAFEPIN_MAPS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The read-only register flag: hipHostRegisterReadOnly (HIP 6) and
 * CU_MEMHOSTREGISTER_READ_ONLY share the value. */
#define SP_REGISTER_READ_ONLY 0x08u

/* 1 if every page of [addr, addr+len) is mapped readable, and writable
 * too unless read_only_ok; 0 if some page is not (a hole, PROT_NONE,
 * read-only); -1 if the mappings cannot be read (the caller then keeps
 * its own answer). No lock; any thread, a host function, a forked child. */
int sp_maps_pinnable(uintptr_t addr, size_t len, int read_only_ok);

#ifdef __cplusplus
}
#endif
#endif
