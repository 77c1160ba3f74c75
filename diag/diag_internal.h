/*
 * diag_internal.h - shared by the files of diag/ only: the state of the
 * diagnostics that the log, the report and the summary read, and the
 * helpers each file uses of another's.
 *   diag.c     the codes, counts, violations kept for the report, the
 *              runtimes named, a diagnostic said, the hazards prevented;
 *              start and fork
 *   log.c      the log: its file or stderr, its lines
 *   sites.c    the stack where a diagnostic happens
 *   report.c   the JSON report
 *   summary.c  release latencies and the summary at the end of the run
 * Everything here runs on safepin's own stack (util/ownstack.h), but
 * sp_diag_capture, which runs on the caller's.
 */
#ifndef SAFEPIN_DIAG_INTERNAL_H
#define SAFEPIN_DIAG_INTERNAL_H

#include "diag.h"
#include "symbolize.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ---- diag.c ---- */

/* Each code of codes.inc: its name, level, whether it is a violation. */
typedef struct sp_code_info {
    const char *name;
    int level;
    int violation;
    const char *desc;
} sp_code_info;
extern const sp_code_info sp_code_table[SP_CODE_COUNT];

/* Each hazard of hazards.inc, and how many were prevented (atomic). */
typedef struct sp_hazard_info {
    const char *name, *did;
} sp_hazard_info;
extern const sp_hazard_info sp_hazard_table[SP_HZ_COUNT];
extern uint64_t sp_hazard_count[SP_HZ_COUNT];

/* safepin's own loaded segments (found at sp_diag_init). */
extern uintptr_t sp_diag_self_lo, sp_diag_self_hi;
/* This process was forked from one that ran safepin. */
extern int sp_diag_forked_child;

/* Diagnostics counted on this thread: a hook compares it before and after
 * the program's call (runtime/api_error.c). */
extern __thread uint64_t sp_tls_diags __attribute__((tls_model("initial-exec")));
/* Counts one occurrence of c (a violation, or not: leak_check=report);
 * returns how many there were. */
uint64_t sp_diag_count_code(sp_code c, int violation);

/* The runtimes, by slot (sp_diag_runtime_name): their names, what each
 * does without safepin by hazard (or NULL), and which the program used
 * (atomic: bit rt). */
#define SP_DIAG_RT_MAX 4
extern const char *sp_diag_rt_names[SP_DIAG_RT_MAX];
extern const char *const *sp_diag_rt_bare[SP_DIAG_RT_MAX];
extern unsigned sp_diag_rt_used;

/* Violations kept for the report. */
#define SP_MAX_KEPT 256

typedef struct kept_violation {
    sp_code code;
    uint64_t t_ns;
    uintptr_t base;
    size_t size;
    char msg[256];
    int rt;                 /* the runtime (sp_diag_runtime_name's index), -1: none named */
    sp_site *at, *registered, *unregistered;
    /* Each frame's module when kept (or NULL): a frame whose module has
     * been unloaded since, maybe replaced at its address, gets no names. */
    sp_module_stamp *at_st, *registered_st, *unregistered_st;
} kept_violation;

extern kept_violation *sp_kept[SP_MAX_KEPT];
extern unsigned sp_kept_n;
extern pthread_mutex_t sp_kept_lock; /* guards sp_kept, sp_kept_n */
/* Keeps a violation for the report (takes here); dropped if memory runs out. */
void sp_diag_keep_violation(sp_code c, const char *msg, sp_site *here, const sp_diag_range *r);

/* ---- log.c ---- */

/* in with %p expanded to the pid; in, relative to the current directory
 * now, made absolute. */
void sp_diag_expand_path(const char *in, char *out, size_t n);
void sp_diag_make_absolute(const char *in, char *out, size_t n);
/* At sp_diag_init: log_path made absolute. In a forked child: a log file
 * of its parent's whose path has %p is closed (the child opens its own). */
void sp_log_init(void);
void sp_log_fork_child(void);
/* A line of a diagnostic sp_diag has counted already. */
void sp_log_counted(const char *code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A stack, "  what (thread tid):" and its frames symbolized, to the log. */
void sp_log_print_pcs(const char *what, void *const *pc, int n, pid_t tid);

/* ---- sites.c ---- */

/* Where a diagnostic of code c happens (sp_diag_site, sp_diag, sp_log):
 * held for suppressions of c too. On the caller's stack. */
sp_site *sp_diag_capture(sp_code c);

/* ---- report.c ---- */

/* At sp_diag_init: the report's path made absolute. At the end of the
 * run (the summary's): the report, if one is wanted, with the release
 * latencies' percentiles and count. */
void sp_report_init(void);
void sp_report_at_exit(int exit_status, double p50, double p90, double p99, double max,
                       uint64_t nlat);

/* ---- summary.c ---- */

/* Release latencies recorded (atomic; the last SP_LAT_MAX are kept). */
#define SP_LAT_MAX 65536
extern uint64_t sp_diag_lat_n;

#endif
