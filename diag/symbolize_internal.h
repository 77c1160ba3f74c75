/*
 * symbolize_internal.h - shared by the symbolizer's files only:
 *   symbolize.c  frames named: dladdr, the cache by pc, batches of many
 *                modules, the dying path, a frame's line
 *   addr2line.c  addr2line found, started invisibly to the program,
 *                asked for one module's frames within a deadline
 */
#ifndef SAFEPIN_SYMBOLIZE_INTERNAL_H
#define SAFEPIN_SYMBOLIZE_INTERNAL_H

#include "symbolize.h"

#include <stddef.h>
#include <stdint.h>

#define RUN_MAX_ADDRS 1024 /* addresses per run */

/* ---- symbolize.c ---- */

/* src into dst[n], cut to fit, always terminated. */
void sp_sym_copy_str(char *dst, size_t n, const char *src);

/* ---- addr2line.c ---- */

extern char sp_a2l_path[512]; /* absolute; "" none (set once, by sp_symbolize_init) */
extern int sp_a2l_broken;     /* a run missed its deadline: none again (atomic) */

/* addr2line on the module at path for the file addresses addr[0..k)
 * (k <= RUN_MAX_ADDRS), answering out[idx[i]], until deadline_ns; dying:
 * a fatal signal's handler (no lock, its own static space). */
void sp_a2l_run(int dying, const char *path, const uintptr_t *addr, const int *idx, int k,
                sp_frame_info *out, uint64_t deadline_ns);

/* A forked child: closes the pipes it inherited; fresh locks (prepared:
 * the prepare handler took the pipe lock). */
void sp_a2l_fork_child(int prepared);

#endif
