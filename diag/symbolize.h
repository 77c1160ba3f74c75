/*
 * symbolize.h - turn recorded program counters into function, file:line
 * and module+offset.
 */
#ifndef SAFEPIN_SYMBOLIZE_H
#define SAFEPIN_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SP_SYM_MAX 64      /* frames per sp_symbolize call */
#define SP_SYM_BATCH 2048  /* frames per sp_symbolize_dying call */
#define SP_SYM_CACHE_WAYS 8 /* pcs of one cache set kept side by side */

typedef struct sp_frame_info {
    char func[128];        /* function (demangled), or "" */
    char file[192];        /* source file, or "" without debug info */
    int line;              /* its line, or 0 */
    char module[128];      /* base name of the object */
    uintptr_t module_offset;
    uintptr_t func_offset; /* from dladdr, when has_offset */
    int has_offset;
} sp_frame_info;

/* Finds addr2line on PATH (once); before any symbolization can run inside a
 * hook. Without it, symbolization uses dladdr only. */
void sp_symbolize_init(void);

/* Symbolize n return addresses (at most SP_SYM_MAX; a site's frames: each
 * is looked up at its call instruction, the byte before it). Runs addr2line (symbolize
 * option) without allocating, invisibly to the program, and bounded in
 * time; never fails: missing parts stay empty. Not a cancellation point. */
void sp_symbolize(void *const *pc, int n, sp_frame_info *out);

/* sp_symbolize for the frames of the stack pc[0..n) with want[i] set (all
 * when want is NULL); out[i] of the others is left as it was. pc[0] is
 * where the stack was taken, as for sp_symbolize, whichever are wanted. */
void sp_symbolize_some(void *const *pc, int n, const unsigned char *want, sp_frame_info *out);

/* Many frames at once, outside any hook (a report written at exit): n is
 * not bounded, adj[i] nonzero: pc[i] is a return address. One addr2line
 * run per module (and per 1024 addresses), each bounded as one of
 * sp_symbolize's, none started after 10 s (the rest keep module+offset,
 * and a warning says so). Allocates; -1 when it cannot (out then holds
 * dladdr's names). Called in a signal handler that interrupted this
 * thread's own symbolization: dladdr's names only. */
int sp_symbolize_many(void *const *pc, const unsigned char *adj, int n, sp_frame_info *out);

/* Many frames at once from a fatal signal handler (at most SP_SYM_BATCH;
 * adj[i] nonzero: pc[i] is a return address). No lock, no cache, static
 * memory: one caller at a time. One addr2line run per module (and per 1024
 * addresses); none is started after deadline_ns, and one still running then
 * is killed: its frames keep module+offset. */
void sp_symbolize_dying(void *const *pc, const unsigned char *adj, int n, sp_frame_info *out,
                        uint64_t deadline_ns);

/* Module, offset and exported name only (dladdr). */
void sp_symbolize_plain(void *pc, sp_frame_info *out);

/* fork: prepare takes only the short lock around the symbolizer's pipes;
 * the child closes the pipes it inherited and starts with fresh locks. */
void sp_symbolize_fork_prepare(void);
void sp_symbolize_fork_parent(void);
void sp_symbolize_fork_child(int prepared);

/* The module that holds pc now, as dladdr says (its load base and a hash
 * of its path; zeros when none): a stack kept for later can tell whether
 * the module its pc named then is still the one there. */
typedef struct sp_module_stamp {
    const void *fbase;
    uint64_t path_hash;
} sp_module_stamp;
void sp_symbolize_stamp(void *pc, sp_module_stamp *out);

/* Testing only: the cache set a pc falls in (adjusted: looked up as a
 * return address), and how many addr2line runs have started. */
unsigned sp_symbolize_cache_set(void *pc, int adjusted);
unsigned long sp_symbolize_runs(void);

/* "    #i 0xPC in func file:line (module+0xoff)\n" into buf. */
int sp_format_frame(char *buf, size_t n, int i, void *pc, const sp_frame_info *f);

#ifdef __cplusplus
}
#endif
#endif
