/*
 * internal.h - what simhip's files share. Nothing here is exported: the
 * version script (libamdhip64.map) makes every non-hip* symbol local.
 *
 * Rule: simhip never calls its own exported hip* functions (safepin
 * interposes them with LD_PRELOAD and must only see the program's calls).
 * Every exported function is a thin wrapper around an sh_* function here.
 *
 * Locks, in the only order they may nest:
 *   sh_dev_lock (streams, events, captures; one condition variable sh_dev_cond)
 *   -> sh_mem_lock (the range table: allocations and registrations)
 * Device operations run on stream worker threads with no lock held, except
 * sh_mem_lock (read) around each checked access.
 */
#ifndef SIMHIP_INTERNAL_H
#define SIMHIP_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <hip/hip_runtime_api.h>

#include "simhip.h"

#define SH_MAX_DEVICES 16

/* ---- config.c: environment, one-time init, fork ------------------------ */
/* ROCm behaviours (DESIGN section 3): legacy 5.2-5.5, current 6.2+ (the
 * 5.x ABI: struct and memory-type values of the 5.2 headers), rocm7 7.x
 * (6.x memory-type values, 712 on re-register, hipEventQuery refused
 * during another thread's global capture). */
enum sh_personality { SH_CURRENT, SH_LEGACY, SH_ROCM7 };

struct sh_config {
    enum sh_personality personality; /* SIMHIP_PERSONALITY=current|legacy|rocm7 */
    unsigned delay_us;               /* SIMHIP_OP_DELAY_US */
    int ndevices;                    /* SIMHIP_DEVICES (1..SH_MAX_DEVICES) */
    bool cuda;                       /* the CUDA face (simcuda sets it at init) */
    unsigned worker_exit_delay_ms;   /* SIMHIP_WORKER_EXIT_DELAY_MS (tests: a slow thread exit) */
    unsigned fork_wait_ms;           /* SIMHIP_FORK_WAIT_MS: a fork's wait for ended workers */
};
extern struct sh_config sh_cfg;

void sh_init(void);                  /* idempotent, called by every entry point */
/* The current call began after the runtime's teardown (set by sh_init). */
extern _Thread_local bool sh_tl_after_teardown;
int sh_current_device(void);
void sh_sleep_us(unsigned us);

/* ---- fail.c: injected faults (SIMHIP_FAIL) ------------------------------ */
enum sh_fail_call {
    SH_FAIL_REGISTER, SH_FAIL_UNREGISTER, SH_FAIL_EVENT_CREATE, SH_FAIL_EVENT_RECORD,
    SH_FAIL_EVENT_SYNC, SH_FAIL_STREAM_CREATE, SH_FAIL_HOSTFN, SH_FAIL_COUNT
};
void sh_fail_init(void);             /* from sh_init's one-time init */
/* true: this call of c fails (no effect; the caller returns its error). */
bool sh_fail(enum sh_fail_call c);

/* ---- errors.c -------------------------------------------------------- */
hipError_t sh_ret(hipError_t e);     /* records e as the thread's last error;
                                        hipErrorDeinitialized for a call begun
                                        after teardown */
const char *sh_error_name(hipError_t e);
/* hipErrorNotSupported, recorded: the answer of unmodelled functions. */
int sh_unmodelled(void);
const char *sh_error_string(hipError_t e);
/* Print "simhip: <msg>" to stderr (one write) and abort(). */
_Noreturn void sh_die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- work items: what a stream executes or a graph node replays -------- */
enum sh_work_kind { W_COPY, W_MEMSET, W_KERNEL, W_HOSTFN, W_CALLBACK, W_MARKER, W_NOP };

struct sh_event;

struct sh_work {
    enum sh_work_kind kind;
    void *dst;
    const void *src;
    size_t n;               /* bytes (copy), elements (memset) */
    bool check_dst, check_src; /* false: a pageable side, not checked */
    int value;              /* memset value */
    unsigned elem;          /* memset element size: 1, 2 or 4 */
    simhipKernel_t kfn;
    hipHostFn_t hfn;
    hipStreamCallback_t cb;
    hipStream_t handle;     /* the handle the program named (callbacks) */
    void *arg;              /* kernel args / host function user data */
    struct sh_event *ev;    /* marker */
    uint64_t ev_gen;
};

/* ---- stream.c, worker.c, sync.c: streams, their workers, waits -------- */
struct sh_stream;
struct sh_capture;

struct sh_dep {
    struct sh_stream *s;
    uint64_t seq;
};

struct sh_op {
    struct sh_op *next;
    uint64_t seq;
    struct sh_work w;
    struct sh_dep *deps;
    size_t ndeps;
    bool running; /* its worker executes it (dev lock released meanwhile) */
};

struct sh_stream {
    struct sh_stream *next_all;  /* sh_streams list */
    int device;
    unsigned flags;
    int priority;
    bool is_null, per_thread, blocking, destroyed, worker_running;
    hipStream_t handle;          /* 0, hipStreamPerThread or the struct itself */
    struct sh_op *head, *tail;
    uint64_t enq_seq, done_seq;  /* ops enqueued / completed (in order) */
    int refs;
    struct sh_capture *capture;  /* non-NULL while capturing */
};

extern pthread_mutex_t sh_dev_lock;
extern pthread_cond_t sh_dev_cond;
extern struct sh_stream *sh_streams;
/* Set by the runtime's destructor (worker.c): later calls fail. */
extern bool sh_torn_down;
/* Set by teardown without the device lock (which an exiting thread may
 * hold), so every read is atomic. */
static inline bool sh_is_torn_down(void)
{
    return __atomic_load_n(&sh_torn_down, __ATOMIC_RELAXED);
}

/* Resolve a program's handle (dev lock held). NULL: invalid handle. */
struct sh_stream *sh_stream_lookup_locked(hipStream_t h);
void sh_stream_ref_locked(struct sh_stream *s);
void sh_stream_unref_locked(struct sh_stream *s);

/* Enqueue w on s (dev lock held), after extra (may be NULL). A capturing
 * stream records a graph node instead (*seq = 0). */
hipError_t sh_enqueue_locked(struct sh_stream *s, const struct sh_work *w,
                             const struct sh_dep *extra, size_t nextra, uint64_t *seq);
/* Wait (dev lock held) until s has completed op seq; api names the caller
 * for the deadlock report (sync.c). */
void sh_wait_locked(struct sh_stream *s, uint64_t seq, const char *api);
/* Resolve h and enqueue w (takes the dev lock). *out (optional) gets a
 * referenced stream, to be released with sh_stream_unref_locked. */
hipError_t sh_enqueue_handle(hipStream_t h, const struct sh_work *w, uint64_t *seq,
                             struct sh_stream **out);

enum sh_sync_scope {
    SYNC_STREAM,        /* one stream (the null stream: plus blocking streams) */
    SYNC_DEVICE,        /* every stream of one device */
    SYNC_ALL_DEVICES,   /* every stream of every device */
    SYNC_NULL_ALL_DEVICES /* each device's null stream (with its blocking rules) */
};
void sh_sync(enum sh_sync_scope scope, struct sh_stream *s, int device, const char *api);

/* Fork: forget worker threads and queued work (child side; worker.c). */
void sh_stream_atfork_lock(void);
void sh_stream_atfork_child(void);

/* ---- memcpy.c: copies and fills on a stream (sync: wait until done) ---- */
hipError_t sh_copy(hipStream_t stream, void *dst, const void *src, size_t n, hipMemcpyKind kind,
                   bool sync, const char *api);
hipError_t sh_fill(hipStream_t stream, void *dst, int value, unsigned elem, size_t count,
                   bool sync, const char *api);
/* A copy as the device runs it: a side covered by a range at this moment is
 * checked when it executes, another is pageable (staged, unchecked). */
void sh_copy_work(struct sh_work *w, void *dst, const void *src, size_t n);

/* ---- ops.c: executing work on a worker thread ------------------------ */
void sh_execute(struct sh_stream *s, struct sh_op *op);
/* The stream whose host function runs on this thread (NULL otherwise). */
extern _Thread_local struct sh_stream *sh_tl_hostfn_stream;
extern _Thread_local uint64_t sh_tl_hostfn_seq;

/* ---- memory.c, access.c, register.c, attributes.c: ranges, accesses -- */
enum sh_range_kind { R_DEVICE, R_HOSTMALLOC, R_REGISTERED };

struct sh_range {
    uintptr_t base;
    size_t size;
    unsigned flags;
    enum sh_range_kind kind;
    int device;
    bool unregistering;          /* hipHostUnregister in progress */
    int attr_busy;               /* hipPointerGetAttributes in progress */
    bool managed;                /* hipMallocManaged */
    /* CUDA face only: */
    bool locked;                 /* mlock succeeded: the pinned pages can be told apart */
    unsigned char *ghost;        /* the pinned pages the process no longer maps (lazy) */
    void *owner;                 /* the context current at allocation / registration */
};

/* Registration flags a runtime accepts: Portable 1, Mapped 2, IoMemory 4,
 * bit 3 (hipExtHostRegisterCoarseGrained in ROCm 5.x, hipHostRegisterReadOnly
 * in 6.x, CU_MEMHOSTREGISTER_READ_ONLY in CUDA: with it, read-only pages
 * can be registered) and, for HIP, hipExtHostRegisterUncached (bit 31):
 * clr's ihipHostRegister mask. simcuda refuses bits above 3 itself. */
#define SH_REGISTER_FLAGS (0xfu | 0x80000000u)
#define SH_REGISTER_READ_ONLY 0x8u

/* What a pin of [p, p+n) would meet: every page mapped with the access it
 * needs (read and write; read only with read_only_ok), a hole (unmapped
 * pages), PROT_NONE pages, or read-only pages. Read from /proc/self/maps;
 * never touches the range (register.c). */
enum sh_span { SPAN_OK, SPAN_HOLE, SPAN_NONE, SPAN_READ_ONLY };
enum sh_span sh_span_check(const void *p, size_t n, bool read_only_ok);

/* The owner recorded in new ranges (the CUDA face sets its current context). */
extern _Thread_local void *sh_tl_owner;
/* Copy the range containing p into *out; false when there is none. */
bool sh_mem_lookup(const void *p, struct sh_range *out);

extern pthread_rwlock_t sh_mem_lock;
/* 1: every byte of [p, p+n) lies in some range of the table (no mincore). */
bool sh_mem_covered(const void *p, size_t n);
/* Bytes of device allocations (hipMalloc, pitched, managed) on device. */
size_t sh_mem_device_bytes(int device);
/* 1: p lies in a hipMalloc allocation. */
bool sh_mem_is_device(const void *p);
/* Checked device access: fault (line + abort) unless every byte is covered
 * by a live range and mapped; then copy. dst/src: check_dst/check_src
 * (access.c). */
void sh_device_copy(void *dst, const void *src, size_t n, bool check_dst, bool check_src);
void sh_device_fill(void *dst, int value, unsigned elem, size_t count);

/* ---- capture.c --------------------------------------------------------- */
struct sh_graph {
    struct sh_work *nodes;
    size_t n, cap;
};
struct sh_capture {
    struct sh_capture *next;
    struct sh_stream *s;
    hipStreamCaptureMode mode;
    pthread_t thread;
    unsigned long long id;
    bool invalidated;
    struct sh_graph *graph;
};
/* 900 when a capture forbids this call from this thread (invalidating that
 * capture in the current and rocm7 personalities); s: the stream operated on, or NULL. */
hipError_t sh_capture_check(struct sh_stream *s);
hipError_t sh_capture_add_locked(struct sh_capture *c, const struct sh_work *w);
/* End a capture without a graph (its stream is being destroyed). */
void sh_capture_drop_locked(struct sh_capture *c);
void sh_capture_atfork_child(void);

/* ---- event.c ----------------------------------------------------------- */
struct sh_event {
    struct sh_event *next_all;
    unsigned flags;
    struct sh_stream *s;         /* stream of the last real record */
    uint64_t seq;                /* its marker op */
    uint64_t gen;                /* record generation */
    bool recorded, destroyed, t_valid;
    double t_ms;                 /* CLOCK_MONOTONIC at marker execution */
    int refs;
};
void sh_event_ref_locked(struct sh_event *e);
void sh_event_unref_locked(struct sh_event *e);
void sh_event_marker(struct sh_event *e, uint64_t gen); /* runs on the worker */
void sh_event_marker_locked(struct sh_event *e, uint64_t gen); /* the same, dev lock held */

#endif /* SIMHIP_INTERNAL_H */
