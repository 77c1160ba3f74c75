/*
 * streams.h - which device work a release must wait for, and the markers
 * that cover it.
 *
 * "Work enqueued before now" is covered by a marker set (sp_marks):
 *   - one marker on the null stream of every device the process can use
 *     (it covers every blocking stream, per-thread default streams included):
 *     HIP, every device (hipGetDeviceCount); CUDA, per context: every
 *     context the program created (hooked) or registered or made streams
 *     in, and every device's primary context that is active now, asked at
 *     each set (the driver's cuDevicePrimaryCtxGetState), so a context with
 *     work on its legacy or per-thread stream is covered even when no
 *     hooked call ever ran with it current;
 *   - one marker on each live non-blocking stream;
 *   - for a stream that is capturing, the event recorded on it just before
 *     its capture began (captured work does not execute; what was enqueued
 *     before the capture does), so a release never waits for a capture to
 *     end and never records into a capturing stream (G6);
 *   - the tail marker of every destroyed stream whose work may still run.
 * Each stream is queried first: an idle one needs no marker, so a set over
 * finished work costs a few queries. Every runtime call made here runs in
 * relaxed capture mode, never inside a host function of the program.
 *
 * State is guarded by sp_lock (util/lock.h). Functions say whether
 * they are called with it held. Dependencies: runtime/, diag/, registry/,
 * util/. Callers: reaper/, interpose/.
 */
#ifndef SAFEPIN_STREAMS_H
#define SAFEPIN_STREAMS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sp_marks sp_marks;

/* Snapshot what must be covered now. Lock held (released while the
 * driver is asked which primary contexts are active, and while a capture
 * begin or a stream destroy is half done). NULL if out of memory. */
sp_marks *sp_marks_take(void);
/* Query, then record markers on the streams still busy. Lock NOT held.
 * Returns 0, or -1 if a marker could not be recorded because the runtime
 * refused it during a capture (the set is then incomplete: wait for the
 * captures to end with sp_marks_wait_captures and take a new set). */
int sp_marks_record(sp_marks *m);
/* 1 if every marker of the set has completed (queries only). Lock NOT held. */
int sp_marks_done(sp_marks *m);
/* Wait for every marker of the set. Lock NOT held. */
void sp_marks_wait(sp_marks *m);
/* Destroy the set (its own events; shared ones are released). Lock NOT held. */
void sp_marks_put(sp_marks *m);
/* 1 if the set skipped captured work of a capturing stream. */
int sp_marks_saw_capture(const sp_marks *m);
/* Lock held: wait until no stream captures (fallback of sp_marks_record). */
void sp_marks_wait_captures(int *stop);

/* The number of ordinal places (devices) of rt, asked once (device_count). */
void sp_streams_init_places(int rt);
/* 1 if this thread began a capture that is still open. Lock held. */
int sp_streams_thread_captures(void);
/* Lock held. 1 if any thread's capture is open (or beginning). */
int sp_streams_any_captures(void);
/* Reaper side: 1 if streams have work for it (destroys handed over from
 * host functions, events to destroy). Lock held. sp_streams_service does
 * that work. Lock NOT held. */
int sp_streams_has_work(void);
void sp_streams_service(void);
/* Table sizes, for the soak's growth check: streams tracked, tail markers of
 * destroyed streams still held. Lock held. */
void sp_streams_sizes(size_t *streams, size_t *orphans);
/* Fork child: forget every stream and event. */
void sp_streams_fork_child(void);

/* Relaxed capture mode around runtime calls made for safepin itself, in
 * every runtime in use (the value packs each one's old mode). */
int sp_relaxed_enter(void);
void sp_relaxed_leave(int old);

/* ---- the streams of runtime rt (runtime.h) ------------------------------ */

/* Lock held. A stream created through a hook, in place (device/context). */
int sp_streams_add_rt(int rt, void *s, unsigned flags, void *place);
/* Lock held. A place (context) whose null stream markers must cover. */
int sp_streams_add_place(int rt, void *place);
/* Lock held. A destroyed place (context): its streams and events are
 * forgotten without any call (they died with it). */
void sp_streams_drop_place(int rt, void *place);
/* 1 if s is capturing (as far as the runtime said). Lock held. */
int sp_streams_is_capturing_rt(int rt, void *s);
/* A destroy: keeps the stream's queued work covered (a tail marker, or its
 * pre-capture event), then forgets it. Lock NOT held. Returns 1 if the
 * real destroy was handed to the reaper (called from a host function: no
 * runtime call is made here), 0 if the caller makes it now. */
int sp_streams_destroy_rt(int rt, void *s);
/* Capture begin: records the pre-capture event and makes the real call
 * (call); capture end: makes it. Both then track what the runtime says
 * (stream_capturing), not what was asked. Lock NOT held. Returns its code. */
typedef int (*sp_capture_call)(void *s, void *arg);
/* The capture modes, as HIP and CUDA number them. */
enum { SP_CAPTURE_GLOBAL = 0, SP_CAPTURE_THREAD_LOCAL = 1, SP_CAPTURE_RELAXED = 2 };
int sp_streams_begin_capture_rt(int rt, void *s, int mode, sp_capture_call call, void *arg);
int sp_streams_end_capture_rt(int rt, void *s, sp_capture_call call, void *arg);
/* Lock NOT held. 1 if every stream of rt known to safepin (each place's
 * null stream, every tracked stream, the tail of every destroyed stream)
 * is idle now (queries only). */
int sp_streams_idle(int rt);
/* As sp_streams_idle, but a stream of rt that captures makes it 0 (its
 * work from before the capture began is not asked): 1 means the work
 * enqueued on rt before this call is done, with no capture to look past. */
int sp_streams_quiet(int rt);
/* Lock NOT held; not in a host function. Whether the runtime would refuse
 * an unregister (or another call unsafe during a capture) made by the
 * calling thread now, and invalidate a capture, as it does bare: 0 no;
 * SP_CAPTURE_REFUSED_OWN where this thread captures in a mode other than
 * relaxed, SP_CAPTURE_REFUSED_OTHER where another thread captures in
 * global mode; and the thread's own mode is not relaxed (global for the
 * other thread's). *stream: the capturing stream. Asks the thread's mode
 * of the runtime only while a capture is open. */
enum { SP_CAPTURE_REFUSED_OWN = 1, SP_CAPTURE_REFUSED_OTHER = 2 };
int sp_streams_capture_refuses(int rt, void **stream);
/* 1 if rt's places are its devices and it has exactly one. */
int sp_streams_one_device(int rt);

#ifdef __cplusplus
}
#endif
#endif
