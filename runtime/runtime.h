/*
 * runtime.h - what the reaper and the stream tracker call in a runtime,
 * per runtime: one ops table for HIP (interpose/hip_ops.c), one for the
 * CUDA driver (cuda/cuda_ops.c).
 *
 * Every range and every tracked stream remembers its runtime (SP_RT_*) and
 * its place: the HIP device ordinal, or the CUDA context. The reaper makes
 * that place current before it records a marker or calls the real
 * unregister. Handles (streams, events) are passed as void *; codes are the
 * runtime's own (0 is success in both).
 *
 * Dependencies: none. Callers: reaper/, interpose/, cuda/.
 */
#ifndef SAFEPIN_RUNTIME_H
#define SAFEPIN_RUNTIME_H

#ifdef __cplusplus
extern "C" {
#endif

enum { SP_RT_HIP = 0, SP_RT_CUDA = 1, SP_RT_N = 2 };

typedef struct sp_rt_ops {
    const char *name;             /* "HIP", "CUDA": diagnostics and the report */
    const char *unregister_name;  /* the real unregister, named in diagnostics */
    const char *free_name;        /* the runtime's device free */
    void *null_stream;            /* the stream whose marker covers every blocking stream */
    /* 1: the real unregister waits for the whole device under a driver lock
     * (other threads' launches stall): releases are held while the device
     * is busy (reaper/hold.c). */
    int device_wide_unregister;
    int err_not_registered;       /* the code for memory the runtime has not registered */
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
    /* The runtime's name of code ("hipErrorInvalidValue"), asked of the
     * runtime itself; NULL where none can be had (no such function, or in a
     * host function, where safepin calls nothing). */
    const char *(*error_name)(int code);
    int (*present)(void);         /* 1 once the runtime is loaded and in use */
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
} sp_rt_ops;

extern const sp_rt_ops sp_hip_ops;
extern const sp_rt_ops sp_cuda_ops;

/* The ops of runtime rt (SP_RT_*). */
static inline const sp_rt_ops *sp_rt(int rt) { return rt == SP_RT_CUDA ? &sp_cuda_ops : &sp_hip_ops; }

#ifdef __cplusplus
}
#endif
#endif
