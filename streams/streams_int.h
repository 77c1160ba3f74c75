/*
 * streams_int.h - shared by the files of streams/ only: the tracker's state
 * and types, and the helpers each file uses of another's.
 *   streams.c   the streams and places markers must cover, destroyed
 *               streams' tail markers, places that end, idleness
 *   captures.c  captures: their begin and end, and waiting for them
 *   markers.c   marker sets: taken, recorded, waited on, put back
 */
#ifndef SAFEPIN_STREAMS_INT_H
#define SAFEPIN_STREAMS_INT_H

#include "streams.h"
#include "runtime.h"

#include <pthread.h>
#include <stddef.h>

/* An event several owners wait on (pre-capture events, tail markers). */
typedef struct shared_ev {
    void *ev;
    int rt;                /* SP_RT_*: whose event */
    void *place;           /* the place it belongs to */
    int refs;
    int orphan;            /* on sp_st.orphans (holds one ref); lock held */
    int done;              /* known complete; atomic (set without the lock) */
    struct shared_ev *next;
} shared_ev;

typedef struct stream_ent {
    void *s;
    int rt;                  /* SP_RT_* */
    unsigned flags;          /* SP_STREAM_NON_BLOCKING */
    void *place;             /* a device ordinal, or a context (runtime.h) */
    unsigned capturing : 1;  /* the runtime said so */
    unsigned foreign : 1;    /* not created through the hooks */
    unsigned retiring : 1;   /* its destroy was handed to the reaper */
    int begin_pending;       /* a capture begin is between its event and the runtime's answer */
    pthread_t capturer;      /* thread that began the capture (per-thread streams: the key) */
    int capture_mode;        /* SP_CAPTURE_*: the mode that capture began in */
    shared_ev *pre;          /* recorded just before the current capture began */
    struct stream_ent *next;
} stream_ent;

typedef struct place_ent {
    int rt;
    void *place;
} place_ent;

/* The tracker's state. Guarded by sp_lock (util/lock.h). */
struct streams_state {
    stream_ent *streams;
    shared_ev *orphans;      /* tail markers of destroyed streams */
    size_t n_orphans, prune_at;
    shared_ev *dead;         /* refs 0: destroyed outside the lock */
    int ndev[SP_RT_MAX];     /* ordinal places: one null-stream marker each */
    place_ent *places;       /* handle places (contexts) seen: one null-stream marker each */
    int nplaces, places_cap;
    int n_capturing;
    int n_unsettled;         /* capture begins in progress: sets wait */
    int marking;             /* sets being recorded: begins and destroys wait */
    int n_retiring;
};
extern struct streams_state sp_st;

enum mark_kind { MK_NULL, MK_STREAM, MK_SHARED };

typedef struct mark {
    enum mark_kind kind;
    int rt;
    void *place;
    void *s;
    void *ev;                /* own event (MK_NULL, MK_STREAM), NULL: idle */
    shared_ev *sh;           /* MK_SHARED */
    int avoid;               /* MK_NULL: a blocking stream of the place captures
                                (null_stream_breaks_capture): not touched */
    int switch_place;        /* the place is made current for its calls */
} mark;

struct sp_marks {
    int reserve;             /* 1 + its index in reserve_pool, or 0: allocated */
    int n;
    int saw_capture;
    int incomplete;          /* captured stream whose earlier work has no event */
    int n_capturing;         /* streams capturing when the set was taken */
    mark m[];
};

/* The calling thread's place in one runtime, saved on first change and
 * restored at the end (a program thread keeps its device and context). */
typedef struct place_state {
    int tried, saved_ok, cur_ok;
    void *saved, *cur;
} place_state;

/* At most this many places are named by one scan (sp_rt_ops.scan_places)
 * without an allocation. */
#define SP_SCAN_BUF 16

/* The places the runtimes scanned (scan_places), per runtime. */
typedef struct scanned {
    void *buf[SP_RT_MAX][SP_SCAN_BUF];
    void **v[SP_RT_MAX];
    int n[SP_RT_MAX];
} scanned;

/* streams.c: places (the calling thread's, per runtime), stream entries,
 * shared events, scans of the places in use. Each says there whether the
 * lock must be held. */
int sp_st_is_per_thread(int rt, void *s);
void sp_st_go_to(int rt, place_state *ps, void *place);
void sp_st_go_back(int rt, place_state *ps);
void sp_st_go_back_all(place_state *ps);
void sp_st_marking_done(place_state *ps, int old);
void sp_st_go_to_for_events(int rt, place_state *ps, void *place);
stream_ent **sp_st_find_stream(int rt, void *s);
void sp_st_unref(shared_ev *e);
void sp_st_flush_dead(void);
void *sp_st_record_on(int rt, void *s);
shared_ev *sp_st_new_shared(int rt, void *place, void *ev);
int sp_st_scan_places(int rt, void **buf, void ***out);
void sp_st_scan_done(void **buf, void **v);
int sp_st_known_place(int rt, void *place);
int sp_st_ordinal_count(int rt);
int sp_st_needs_switch(int rt);
void sp_st_drop_entry(stream_ent **pp);

/* markers.c: every runtime's places scanned, and the null-stream marks
 * they make (places that end, in streams.c, use them too). */
void sp_st_scan_all(scanned *sc, int only);
void sp_st_scan_all_done(scanned *sc);
size_t sp_st_null_marks_cap(int rt, const scanned *sc);
size_t sp_st_null_marks(int rt, const scanned *sc, mark *v);

#endif
