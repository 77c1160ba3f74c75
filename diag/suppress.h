/*
 * suppress.h - suppressions: diagnostics the user (or safepin's shipped
 * defaults) declared known, matched against the diagnostic's stacks.
 *
 * A suppressions file holds lines "CODE:PATTERN": CODE a diagnostic code
 * (codes.inc) or '*', PATTERN a glob ('*' any run of characters, '?' one)
 * matched against the whole function name or the whole module name (the
 * object's base name) of any frame of the stacks given: where the diagnostic
 * happened and where its range was registered. A pattern that contains
 * ".so" is a module pattern: matched against module names only, it never
 * needs the symbolizer (addr2line). Every other pattern is a function
 * pattern, matched against module names too. '#' starts a comment line;
 * blank lines are ignored; a malformed line is reported once, with its file
 * and line number, and ignored (said by a process that has something to
 * say: see sp_supp_flush).
 *
 * Files are read once, at start-up (sp_supp_init, from sp_diag_init), with
 * read(2) into static tables: nothing here allocates. The tables do not
 * change afterwards; only the hit counters do (atomics).
 *
 * Dependencies: diag (sites, logging), symbolize. Callers: diag/ (diag.c,
 * log.c, sites.c, report.c, summary.c).
 */
#ifndef SAFEPIN_SUPPRESS_H
#define SAFEPIN_SUPPRESS_H

#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "symbolize.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SP_SUPP_MAX 512         /* suppressions, defaults included */
#define SP_SUPP_PATTERN_MAX 256 /* characters of a pattern */
#define SP_SUPP_CODE_ANY (-1)
/* Frames a stack that suppressions may match holds at least, whatever the
 * backtrace option (0 included) says is shown: the registration site of a
 * caching allocator is a few frames below the register hook (two of
 * libcudart's above PyTorch's). */
#define SP_SUPP_FRAMES 8

typedef struct sp_supp {
    int code;               /* an sp_code, or SP_SUPP_CODE_ANY ('*') */
    char pattern[SP_SUPP_PATTERN_MAX];
    int source;             /* index for sp_supp_source */
    unsigned line;          /* line in that source */
    int is_default;         /* from the suppressions shipped with safepin */
    int is_module;          /* a module pattern (sp_supp_is_module_pattern) */
    uint64_t hits;          /* diagnostics it silenced (atomic) */
} sp_supp;

/* Load the shipped defaults (default_suppressions=1) and every file named
 * by the suppressions option, resolved against the current directory now.
 * Once. Returns the number of problems reported (malformed lines, files
 * that cannot be read). */
int sp_supp_init(void);

/* Add the suppressions in text (len bytes) under the name source ("" for
 * the shipped defaults); malformed lines are reported as source:LINE.
 * Returns the number of malformed lines. For sp_supp_init and tests. */
int sp_supp_add_text(const char *text, size_t len, const char *source, int is_default);

/* Forget every suppression (tests). */
void sp_supp_reset(void);

/* Nonzero if some suppression names code c (or '*'): only then are stacks
 * matched. One load and a bit test. */
int sp_supp_wanted(int c);

/* Nonzero if any suppression is loaded (the defaults count): a registration
 * then holds SP_SUPP_FRAMES of its stack whatever the backtrace option. */
int sp_supp_any(void);

/* Nonzero if pattern is a module pattern: it contains ".so". */
int sp_supp_is_module_pattern(const char *pattern);

/* The first suppression for code c matched by a frame of fi[0..n-1] (a
 * module pattern by the module, any other by the function or the module),
 * or -1. */
int sp_supp_match_frames(int c, const sp_frame_info *fi, int n);

/* A suppression for code c matched by a frame of the given stacks (NULL
 * entries skipped; a stack's held frames, see sp_site), or -1. Every
 * pattern is tried against every frame's module first (dladdr only); only
 * when none matches are frames symbolized for the function patterns: stack
 * by stack, one module at a time, through the symbolizer's cache, until one
 * matches. No addr2line runs when no function pattern names code c. Does
 * not count the hit. */
int sp_supp_match(int c, const sp_site *const *stacks, int nstacks);

/* Count a diagnostic of code c silenced by suppression i. */
void sp_supp_hit(int i, int c);

/* glob(3)-like match of the whole string s: '*' and '?' only. */
int sp_supp_glob(const char *pattern, const char *s);

/* For the summary and the report. */
int sp_supp_count(void);
const sp_supp *sp_supp_get(int i);
const char *sp_supp_source(int source); /* file path, or "" for the defaults */
uint64_t sp_supp_suppressed_total(void);
uint64_t sp_supp_suppressed_user(void); /* by suppressions not shipped with safepin */
uint64_t sp_supp_suppressed_code(int c);

/* The suppression line that would silence a diagnostic of code c whose
 * stacks are given (innermost first): CODE:MODULE of the innermost frame
 * outside safepin and the runtime libraries (GPU runtimes, the C and C++
 * runtimes, sanitizer runtimes). Returns 0 and writes it into buf, or -1
 * when no frame qualifies. self_lo..self_hi: safepin's own code. */
int sp_supp_generate(int c, const sp_site *const *stacks, int nstacks, uintptr_t self_lo,
                     uintptr_t self_hi, char *buf, size_t n);

/* Say the problems found in the suppressions files (malformed lines,
 * files that cannot be read), once: at the process's first diagnostic, or
 * at its end. */
void sp_supp_flush(void);

/* Fork child: its counts start at zero (the tables stay); the problems of
 * the files are its parent's to say. */
void sp_supp_fork_child(void);

#ifdef __cplusplus
}
#endif
#endif
