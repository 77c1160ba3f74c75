/*
 * core.h - the hooks' logic, once for every runtime.
 *
 * A face's hook (hip/, cuda/) checks that the runtime has the function,
 * then calls one of these with its slot (rt), the names it is called by
 * and, where the program's call itself is made here, a thunk that makes
 * it. Everything else - the registry, nesting, overlaps, revival, the
 * three unregister modes with the ordered wait and back-pressure, the
 * pending ranges' answers, deferral inside host functions, captures,
 * places that end - is here and reaches the runtime only through its
 * table (runtime.h). Codes are the runtime's own. The core names no
 * runtime: a new runtime is a new face and changes nothing here.
 *
 * Dependencies: reaper/, streams/, runtime/, diag/, registry/, util/.
 * Callers: the faces.
 */
#ifndef SAFEPIN_CORE_H
#define SAFEPIN_CORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The names a hook is known by in diagnostics: the call ("hipHostRegister",
 * "cuMemHostRegister_v2") and the runtime call above it that may have
 * reached it ("cudaHostRegister", or NULL): the face's entry_note says, only
 * when a message is written, whether it did (" (cudaHostRegister)" or ""). */
typedef struct sp_call {
    const char *name;
    const char *entry;
} sp_call;

/* The program's register, made by the core: real is the face's function
 * (one form of several: _v2), thunk calls it. */
typedef int (*sp_register_thunk)(void *real, void *p, size_t size, unsigned flags);

/* ---- memory (core/register.c, core/unregister.c) ----------------------- */

int sp_core_register(int rt, const sp_call *c, sp_register_thunk thunk, void *real, void *p,
                     size_t size, unsigned flags);
int sp_core_unregister(int rt, const sp_call *c, void *p);

/* ---- queries, device frees, copies (core/queries.c) -------------------- */

/* The device free of p (the program's device_free, or an answer of the
 * core's: a registered host pointer, a pending range, a host function). */
int sp_core_device_free(int rt, const sp_call *c, void *p);

/* A query of p: the address to ask the runtime (p, or a byte nobody ever
 * registered when p lies in a range whose release is pending: unregistered
 * for the program). *tok: nonzero when the query is serialized with the
 * unregister of p (serialize_queries): pass it to sp_core_query_end. */
void *sp_core_query_begin(int rt, const void *p, uint64_t *tok);
/* The program asked for p's device address: the device is meant to use the
 * range that holds it (its in-flight unregister is then a hazard). */
void sp_core_note_use(const void *p);
void sp_core_query_end(uint64_t tok);
/* 1 if q is that byte. */
int sp_core_is_probe(const void *q);

/* A copy with host sides a and b (either may be NULL) of n bytes on
 * stream s: a side whose release is pending is pageable memory for the
 * program, so the copy has completed when the call returns, and it is
 * serialized with the real unregister. */
typedef struct sp_copy {
    uint64_t ta, tb;
    int sync;
} sp_copy;
void sp_core_copy_begin(int rt, const void *a, const void *b, size_t n, void *s, sp_copy *st);
void sp_core_copy_end(int rt, const sp_copy *st, int code, void *s);

/* ---- streams, host functions, places (core/streams.c) ------------------ */

/* A stream the program created (code: the create's answer): tracked, or,
 * when it cannot be, destroyed again and err_out_of_memory returned. */
int sp_core_stream_created(int rt, int code, void *s, unsigned flags);
/* A destroy of s: 1 when it was handed to the reaper (a host function:
 * the face answers success), 0 when the face makes the real call now. */
int sp_core_stream_destroy(int rt, void *s);

/* Host functions run through a trampoline that marks the thread (no
 * runtime call is made from inside one, G8). The trampoline of fn, with
 * *arg its argument, or NULL (enqueue fn itself: NULL fn, out of memory).
 * A callback's arguments (stream, status, user data) are passed as the
 * runtimes pass them: pointer, int-sized code, pointer. After a failed
 * enqueue, sp_core_host_fn_failed(*arg). */
typedef void (*sp_host_fn)(void *ud);
typedef void (*sp_stream_cb)(void *s, int status, void *ud);
sp_host_fn sp_core_host_fn(int rt, void *s, sp_host_fn fn, void *ud, void **arg);
sp_stream_cb sp_core_stream_cb(int rt, void *s, sp_stream_cb cb, void *ud, void **arg);
void sp_core_host_fn_failed(void *arg);

/* A place (context) the program made: markers cover its null stream. */
void sp_core_place_made(int rt, void *place);
/* A place is about to end: waits until no release there is pending. */
void sp_core_place_ending(int rt, void *place);
/* It ended: its live registrations went with it, and its streams. */
void sp_core_place_ended(int rt, void *place);

#ifdef __cplusplus
}
#endif
#endif
