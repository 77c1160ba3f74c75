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

#define SP_SYM_MAX 64

typedef struct sp_frame_info {
    char func[128];        /* function (demangled), or "" */
    char file[192];        /* file:line, or "" without debug info */
    char module[128];      /* base name of the object */
    uintptr_t module_offset;
    uintptr_t func_offset; /* from dladdr, when has_offset */
    int has_offset;
} sp_frame_info;

/* Prepares spawning addr2line (allocates once); before any symbolization
 * can run inside a hook. Symbolization without it uses dladdr only. */
void sp_symbolize_init(void);

/* Symbolize n program counters (at most SP_SYM_MAX). Spawns addr2line
 * (symbolize option) without allocating; never fails: missing parts stay
 * empty. */
void sp_symbolize(void *const *pc, int n, sp_frame_info *out);

/* The same from a fatal signal handler: no cache, and no lock waited for. */
void sp_symbolize_dying(void *const *pc, int n, sp_frame_info *out);

/* "    #i 0xPC in func file:line (module+0xoff)\n" into buf. */
int sp_format_frame(char *buf, size_t n, int i, void *pc, const sp_frame_info *f);

#ifdef __cplusplus
}
#endif
#endif
