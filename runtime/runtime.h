/*
 * runtime.h - the contract between the core and a runtime's face.
 *
 * A face (hip/, cuda/, a test's toy runtime) fills one sp_rt_ops and
 * registers it with sp_rt_register when it initializes, in its own slot
 * (its face header names it: HIP 0, CUDA 1). Below the faces nothing names
 * a runtime: the core (core/), the reaper, the stream tracker and the
 * diagnostics reach a runtime only through its table (sp_rt), by the slot
 * every range and tracked stream remembers (its rt), with its place: the
 * device ordinal or context current where the program made the call.
 * Handles (streams, events) are void *; codes are the runtime's own (0 is
 * success in every runtime); a stream's flags use bit 0 for non-blocking
 * (SP_STREAM_NON_BLOCKING), as HIP and CUDA both do.
 *
 * Dependencies: none. Callers: everything below and in the faces.
 */
#ifndef SAFEPIN_RUNTIME_H
#define SAFEPIN_RUNTIME_H

#ifdef __cplusplus
extern "C" {
#endif

/* Slots for faces: at most this many runtimes in one process. */
#define SP_RT_MAX 4
/* A stream's flags: non-blocking (does not wait for the null stream). */
#define SP_STREAM_NON_BLOCKING 1u

typedef struct sp_rt_ops {
    const char *name;             /* "HIP", "CUDA": diagnostics and the report */
    const char *call_prefix;      /* its functions' prefix ("hip", "cu"): diag/ */
    const char *whose;            /* "the runtime's", "the driver's": api-error lines */
    const char *register_name;    /* the program's register call, in diagnostics */
    const char *unregister_name;  /* the real unregister, named in diagnostics */
    const char *free_name;        /* the runtime's device free */
    /* What the runtime does without safepin, for each hazard safepin
     * prevents (diag/hazards.inc), indexed by its SP_HZ_* (SP_HZ_COUNT
     * entries; NULL or "" where nothing is known): the summary says it
     * after "hazards prevented". NULL: nothing known of any. */
    const char *const *hazard_bare;
    void *null_stream;            /* the stream whose marker covers every blocking stream */
    /* 1: the real unregister waits for the whole device under a driver lock
     * (other threads' launches stall): releases are held while the device
     * is busy (reaper/hold.c). */
    int device_wide_unregister;
    /* 1: the real unregister itself waits for the work enqueued before it
     * on every stream of its device (ROCm 5.6+, CUDA); 0: on the null
     * stream only (ROCm 5.2-5.5). A call of safepin's own (a version
     * query, asked once), never in a host function. */
    int (*unregister_waits_all)(void);
    int err_not_registered;       /* the code for memory the runtime has not registered */
    int err_already_registered;   /* ... for a register overlapping a registration */
    int err_invalid_value;        /* ... for arguments no call accepts */
    int err_out_of_memory;
    int err_not_ready;            /* a query of work still running */
    int err_capture_invalidated;  /* an end of capture of an invalidated capture */
    /* The answer to an unregister of an interior pointer of a range (HIP:
     * not registered; CUDA: invalid value), and to the device free of a
     * host pointer whose release is pending, from a host function, where
     * the runtime cannot be asked (HIP: invalid value; CUDA: 800, its
     * answer to any device free there). */
    int err_interior;
    int err_free_in_host_fn;
    /* The name of a code, for the messages safepin writes itself
     * ("hipErrorHostMemoryAlreadyRegistered"): static, never asks the
     * runtime. */
    const char *(*code_name)(int code);
    /* Whether the program's call reached the hook through the runtime call
     * named (a shared runtime above the driver): " (name)", or "". NULL:
     * never. Called only to write a message. */
    const char *(*entry_note)(const char *runtime_call);
    /* The code of a runtime torn down (CUDA_ERROR_DEINITIALIZED: a static
     * cudart's exit handler ran first), -1 if none: nothing is left to
     * wait for or release there. */
    int err_gone;
    /* Codes that describe the runtime's or the system's state, not the
     * arguments of the call that returns them (0-terminated): an answer not
     * known yet (NotReady), out of memory, a runtime not initialized or torn
     * down, an earlier asynchronous failure surfacing (an illegal address,
     * a failed launch or assert, an invalidated capture), unknown. Never an
     * api-error (runtime/api_error.h). */
    const int *state_errors;
    /* Codes by which the runtime says it finds no GPU (0-terminated; among
     * the hooked calls none names a device it could be the wrong one of):
     * state errors too, said once as such (runtime/api_error.h). */
    const int *no_device_errors;
    /* The register flag that maps the range for the device (HIP's
     * hipHostRegisterMapped, CUDA's DEVICEMAP): a range registered with it
     * is one the program means the device to use. */
    unsigned mapped_flag;
    /* The runtime's name of code ("hipErrorInvalidValue"), asked of the
     * runtime itself; NULL where none can be had (no such function, or in a
     * host function, where safepin calls nothing). */
    const char *(*error_name)(int code);
    int (*present)(void);         /* 1 once the runtime is loaded and in use */

    /* ---- policy: where the runtimes differ, measured (DESIGN section 3) */
    /* 1: the runtime refuses a register overlapping one of its own
     * registrations (CUDA's 712), so that answer is its own; 0: it does
     * not (HIP accepts it and the later unregisters break), so safepin
     * refuses it, unless the pages cannot be pinned at all (then the
     * runtime's refusal for them comes first, G10). */
    int runtime_refuses_overlap;
    /* Said after "nested (count N)" (CUDA: what its bare driver answers). */
    const char *nest_note;
    /* 1: the device free synchronizes (HIP's hipFree): from a host function
     * the reaper makes it (device_pointer says which pointers are device
     * memory); 0: the runtime answers there itself. */
    int defer_free_in_host_fn;
    /* 1: a stream destroy from a host function is deferred to the reaper
     * (HIP); 0: the runtime refuses it there itself (CUDA's 800). */
    int defer_destroy_in_host_fn;
    /* 1: a query of a pointer (and its device free) is serialized with
     * any real unregister of that pointer, always, whether or not safepin
     * tracks it (HIP segfaults on that pair). */
    int serialize_queries;
    /* Places: 1 when they are device ordinals 0..device_count()-1, each
     * with its null stream (HIP); 0 when they are handles (contexts) made
     * known as they are met (sp_streams_add_place) or scanned (CUDA). */
    int ordinal_places;
    /* 1: events and streams are used with their place current (CUDA: the
     * reaper thread has no context); 0: only where there are several. */
    int place_current_for_events;
    /* 1: the null stream of a place must not be touched while a blocking
     * stream of that place captures (CUDA: a marker there invalidates a
     * global capture). */
    int null_stream_breaks_capture;
    void *per_thread_stream;      /* the per-thread default stream's handle */
    /* A marker: create an event and record it on s. 0, or the error. */
    int (*record)(void *s, void **ev);
    int (*event_query)(void *ev); /* 0: complete */
    int (*event_sync)(void *ev);
    void (*event_destroy)(void *ev);
    int (*stream_query)(void *s); /* 0: idle */
    int (*stream_sync)(void *s);
    void (*stream_destroy)(void *s);
    /* 0 and *capturing (1 capturing or invalidated, 0 not), or the error. */
    int (*stream_capturing)(void *s, int *capturing);
    /* The calling thread's capture mode exchanged (relaxed is 2 in both). */
    void (*exchange_mode)(int *mode);
    /* The calling thread's current place (device / context), and setting it. */
    int (*get_place)(void **place);
    int (*set_place)(void *place);
    /* The places the runtime itself names as in use now, whose null stream
     * markers must cover even where no hooked call ran (CUDA: the primary
     * context of every device where it is active); NULL where the places
     * are known otherwise (HIP: every device). Up to cap written; returns
     * how many there are (more than cap: ask again with room), -1 if the
     * runtime cannot say. Called by streams/ only: never inside a host
     * function, in relaxed capture mode, no lock held. */
    int (*scan_places)(void **places, int cap);
    /* The real unregister of p, registered in place; the deferred device free. */
    int (*unregister)(void *place, void *p);
    int (*mem_free)(void *place, void *p);

    /* ---- the program's calls, as it made them (no place change, its own
     * capture mode); each answers err_not_registered / -1 when the runtime
     * has no such function. */
    int (*host_unregister)(void *p);
    int (*device_free)(void *p);
    /* ---- calls of safepin's own in the program's thread (never in a host
     * function: the core checks) */
    /* The number of devices (ordinal places); NULL for handle places. */
    int (*device_count)(void);
    /* Where the calling thread is: its place, and that place's device
     * ordinal. 0, or -1 (then place NULL, device 0). */
    int (*where)(void **place, int *device);
    /* 1 if the runtime already has an object at p (allocated by it, or
     * registered where safepin did not see it): the register-time probe. */
    int (*knows)(const void *p);
    /* 1 if p is the start of the runtime's device memory (for
     * defer_free_in_host_fn; called from a host function, a query only). */
    int (*device_pointer)(void *p);
    /* After a register safepin tracks, once per process (CUDA: the exit
     * drain goes before the runtime's exit handlers); may be NULL. */
    void (*registered)(void);
} sp_rt_ops;

/* A face's names and codes, in the order of the fields above: the
 * runtime's name, its functions' prefix, whose answer it gives; its
 * register, unregister and device free; then its codes. */
#define SP_RT_NAMES(name_, prefix_, whose_, reg_, unreg_, free_)                \
    .name = name_, .call_prefix = prefix_, .whose = whose_, .register_name = reg_, \
    .unregister_name = unreg_, .free_name = free_
#define SP_RT_CODES(not_registered, already, invalid, oom, not_ready, invalidated, interior, \
                    free_in_host_fn, gone)                                     \
    .err_not_registered = (not_registered), .err_already_registered = (already), \
    .err_invalid_value = (invalid), .err_out_of_memory = (oom), .err_not_ready = (not_ready), \
    .err_capture_invalidated = (invalidated), .err_interior = (interior),      \
    .err_free_in_host_fn = (free_in_host_fn), .err_gone = (gone)

/* The calls of a face's table, by its functions' names: p_present,
 * p_record, ... p_registered (a face without one defines its name as
 * NULL). One list, so that a face's table names only what is its own. */
#define SP_RT_CALLS(p)                                                         \
    .error_name = p##_error_name, .code_name = p##_code_name,                  \
    .entry_note = p##_entry_note,                                              \
    .present = p##_present, .record = p##_record,                              \
    .event_query = p##_event_query, .event_sync = p##_event_sync,              \
    .event_destroy = p##_event_destroy, .stream_query = p##_stream_query,      \
    .stream_sync = p##_stream_sync, .stream_destroy = p##_stream_destroy,      \
    .stream_capturing = p##_stream_capturing,                                  \
    .exchange_mode = p##_exchange_mode, .get_place = p##_get_place,            \
    .set_place = p##_set_place, .scan_places = p##_scan_places,                \
    .unregister = p##_unregister, .mem_free = p##_mem_free,                    \
    .host_unregister = p##_host_unregister, .device_free = p##_device_free,    \
    .unregister_waits_all = p##_unregister_waits_all,                          \
    .device_count = p##_device_count, .where = p##_where, .knows = p##_knows,  \
    .device_pointer = p##_device_pointer, .registered = p##_registered

/* A face's table, in its slot (0 <= rt < SP_RT_MAX), once: at its
 * initialization, before any of its hooks runs the core. */
void sp_rt_register(int rt, const sp_rt_ops *ops);

/* The tables, indexed by slot; an empty slot holds a table whose present()
 * says 0 (nothing is asked of it). */
extern const sp_rt_ops *sp_rt_table[SP_RT_MAX];
static inline const sp_rt_ops *sp_rt(int rt) { return sp_rt_table[rt]; }
/* 1 if any runtime is in use. */
int sp_rt_any_present(void);

#ifdef __cplusplus
}
#endif
#endif
