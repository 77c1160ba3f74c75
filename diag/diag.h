/*
 * diag.h - logging, diagnostics, counters, event history and the report.
 *
 * Logging never allocates: lines are formatted into a fixed buffer and
 * written with write(2), each prefixed "==PID==safepin: <code>: ". Repeats of
 * one code are capped (max_repeats) and counted. Sites (backtraces) are
 * captured by stack.c's walk (backtrace() where it cannot vouch for a frame)
 * into records from sp_mem_alloc.
 *
 * Dependencies: registry/ (a range's sites), util/. Callers: runtime/,
 * streams/, reaper/, interpose/.
 */
#ifndef SAFEPIN_DIAG_H
#define SAFEPIN_DIAG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "options.h"
#include "registry.h"
#include "util.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sp_code {
#define SP_CODE(id, name, level, violation, desc) SP_##id,
#include "codes.inc"
#undef SP_CODE
    SP_CODE_COUNT
} sp_code;

/* A recorded call site: pc[0..held), of which the first n are shown
 * (printed, in the report and the history: the backtrace option); the
 * frames past n (held > n) are kept only for suppressions to match. held <=
 * n means n frames. A site that shows none (backtrace=0) is shared by every
 * capture of the same stack: sp_site_free leaves it alone. */
typedef struct sp_site {
    uint64_t t_ns;
    pid_t tid;
    short n;              /* at most 64 (the backtrace option) */
    unsigned char held;   /* at most 64 */
    unsigned char shared;
    void *pc[];
} sp_site;

typedef struct sp_stats {
#define SP_COUNTER(name) uint64_t name;
#include "counters.inc"
#undef SP_COUNTER
    uint64_t code_count[SP_CODE_COUNT];
} sp_stats;

/* The diagnostics' part of a range (sp_range.part, at SP_SITES_PART):
 * where it was registered, and where unregistered or freed. Owned by the
 * range (freed with sp_site_free when it goes). */
typedef struct sp_range_sites {
    sp_site *reg;
    sp_site *unreg;
} sp_range_sites;
#define SP_SITES_PART 0
#define SP_SITES_PART_END (SP_SITES_PART + sizeof(sp_range_sites))
static inline sp_range_sites *sp_sites(const sp_range *r)
{
    return (sp_range_sites *)sp_reg_part(r, SP_SITES_PART);
}

extern sp_stats sp_stat; /* updated with __atomic builtins */
#define SP_COUNT(field) __atomic_add_fetch(&sp_stat.field, 1, __ATOMIC_RELAXED)
/* A counter's value (another thread may be counting meanwhile). */
#define SP_STAT(field) __atomic_load_n(&sp_stat.field, __ATOMIC_RELAXED)

/* Resolve log_path and report against the current directory, warm up
 * backtrace() and the symbolizer. The log file itself is opened when the
 * first line is written. */
void sp_diag_init(void);

/* diag's part of safepin's fork handlers (interpose/fork.c calls them, in
 * its fixed lock order): prepare takes the symbolizer's pipe lock, parent
 * releases it; the child starts with no violations, counters, history or
 * latencies of its parent and fresh locks of its own (prepared: the prepare
 * handler ran; 0 after a raw fork, whose locks another thread may hold). */
void sp_diag_fork_prepare(void);
void sp_diag_fork_parent(void);
void sp_diag_fork_child(int prepared);

/* Write raw bytes to the log (log_path or stderr), checking first that its
 * descriptor is still safepin's. Async-signal-safe. */
void sp_log_write(const char *buf, size_t len);

/* 1 in the process sp_diag_init (or the fork handler) ran in; 0 in a vfork
 * child, which shares its parent's memory. */
int sp_diag_own_process(void);

/* fd moved to a number >= SP_FD_FLOOR (close-on-exec), out of the way of
 * programs that expect the lowest free one; unchanged under a low
 * descriptor limit. */
#define SP_FD_FLOOR 900
int sp_fd_move_high(int fd);

/* A plain log line at level; code is a word printed after "safepin:". A
 * "runtime-error" line is counted as that diagnostic code. Not a
 * cancellation point. The line is formatted and written on safepin's own
 * stack (util/ownstack.h), as every diagnostic and the report are: the
 * caller's stack only holds the arguments (and, for a runtime-error, the
 * stack captured where it was called). */
void sp_log(int level, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A "trace" line at log=debug only: what a hook saw and did, for tracing how
 * a program reaches the runtime. Checks the level before anything else, and
 * prints nothing before the options are read (look-ups come that early). */
#define SP_TRACE(...)                                                          \
    do {                                                                       \
        if (__builtin_expect(sp_opt.log[0] && sp_opt.log_level >= SP_LOG_DEBUG, 0)) \
            sp_log(SP_LOG_DEBUG, "trace", __VA_ARGS__);                        \
    } while (0)

/* Report a diagnostic: counts it, prints it (capped) with the current stack
 * and, when r is given, where r was registered and unregistered/freed. A
 * violation is kept for the report. Never allocates on the print path;
 * the kept record is dropped if memory runs out. Not a cancellation point. */
/* The runtimes (runtime/runtime.h's SP_RT_* index) the report names:
 * set once at start-up (diag knows no runtime), and each one marked when
 * the program uses it. call_prefix names its calls ("cu", "hip"): a
 * violation without a range is attributed by the call its message names.
 * hazard_bare: what the runtime does without safepin, by sp_hazard (NULL
 * or "" where nothing is known; NULL: none), for the summary. */
void sp_diag_runtime_name(int rt, const char *name, const char *call_prefix,
                          const char *const *hazard_bare);
void sp_diag_runtime_used(int rt);

void sp_diag(sp_code c, const struct sp_range *r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* What a diagnostic says of its range: where it is (base, size; the
 * pointer the call named, size 0, where no range holds it), its runtime
 * (-1: the one the message names), and the stacks kept for it (NULL where
 * none). A range no longer in the registry (released) is given this way. */
typedef struct sp_diag_range {
    uintptr_t base;
    size_t size;
    int rt;
    const sp_site *reg, *unreg;
} sp_diag_range;
void sp_diag_in(sp_code c, const sp_diag_range *r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* sp_diag in two steps, for a caller with work of its own to do on
 * safepin's stack before it reports (runtime/api_error.c): sp_diag_site
 * captures the caller's stack if a diagnostic of code c will want it
 * (NULL otherwise), on the caller's stack; sp_diag_at, from anywhere (on
 * safepin's stack too), reports with that stack (taken). */
sp_site *sp_diag_site(sp_code c);
void sp_diag_at(sp_code c, const struct sp_range *r, sp_site *here, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The hazards safepin prevents (hazards.inc). */
typedef enum sp_hazard {
#define SP_HAZARD(id, name, did) SP_HZ_##id,
#include "hazards.inc"
#undef SP_HAZARD
    SP_HZ_COUNT
} sp_hazard;

/* A hazard prevented: counted by kind, and said as a hazard-prevented info
 * line with the range's stacks (r may be NULL) and, where the caller is
 * the program's call, its own. fmt: what the program did. */
void sp_hazard_prevented(sp_hazard h, const struct sp_range *r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
uint64_t sp_hazards_prevented(void);

/* How many diagnostics (any code, printed or not) this thread has counted:
 * a hook's "did safepin say something of its own about this call". */
uint64_t sp_diag_thread_count(void);

/* Capture the caller's stack (backtrace option frames); NULL if disabled or
 * out of memory. Up to 8 of safepin's own frames above the program's are
 * unwound and dropped. */
sp_site *sp_site_capture(void);
/* The same from an entry hook, whose own frames above the program's are
 * known to be few (the shim, the hook, this function; a sanitizer's
 * backtrace interceptor): each frame unwound costs, on every register and
 * unregister, about a microsecond when the unwind tables are cold. */
sp_site *sp_site_capture_entry(void);
/* sp_site_capture_entry for a registration: while any suppression is
 * loaded, the site holds at least SP_SUPP_FRAMES frames for matching, also
 * under backtrace=0 (which shows none of them). */
sp_site *sp_site_capture_register(void);
void sp_site_free(sp_site *s);

/* Release latency sample (unregister call -> real unregister done). */
void sp_record_latency(uint64_t unregister_call_ns, uint64_t done_ns);

/* Event history for post-mortems. */
typedef enum sp_event {
#define SP_EVENT(id, name) SP_EV_##id,
#include "events.inc"
#undef SP_EVENT
    SP_EV_COUNT
} sp_event;
/* site: frames to keep with the event (may be NULL). */
void sp_history_add(int kind, uintptr_t base, size_t size, const sp_site *site);
/* Print the history: all of it (addr 0), or the events overlapping addr
 * (others 0), or the rest (others 1); its frames symbolized in one batch
 * until deadline_ns, module+offset after. Async-signal-tolerant: no
 * allocation, no locks; one caller at a time. */
void sp_history_dump(uintptr_t addr, int others, uint64_t deadline_ns);
/* Fork child: forget the parent's events. */
void sp_history_fork_child(void);
/* The post-mortem's symbolizer, for a fatal signal's report: frames added,
 * symbolized in one batch until deadline_ns, and found again (NULL: not
 * symbolized). One caller at a time (the post-mortem's owner). */
void sp_pm_add(void *pc);
void sp_pm_symbolize(uint64_t deadline_ns);
const struct sp_frame_info *sp_pm_frame(void *pc);

/* The JSON report (report option), written from a fatal signal's handler
 * after the post-mortem: no allocation, no stdio; its frames symbolized in
 * the post-mortem's batch (5 s at most), no latency percentiles. */
void sp_diag_report_dying(int sig);

/* Install the post-mortem's signal handlers (history option > 0), chained
 * to those installed before (postmortem.c). Once, at the first
 * registration: a program that never registers sees no handler of
 * safepin's (G12). */
void sp_postmortem_install(void);
/* An exit while another thread's fatal signal is being reported waits for
 * that (10 s at most), then a second for the signal's own action, which
 * ends the process as it would have without safepin. */
void sp_postmortem_wait(void);
/* At start-up: what the post-mortem looks up (no handler yet). */
void sp_postmortem_init(void);

/* Number of violations seen so far. */
uint64_t sp_violations(void);

/* End of run: summary on stderr (if anything noteworthy, or log>=info) and
 * the JSON report (report option). */
void sp_diag_finish(int exit_status);

#ifdef __cplusplus
}
#endif
#endif
