/*
 * stream_int.h - shared by simhip's stream files only (stream.c, worker.c,
 * sync.c). Guarded by sh_dev_lock.
 */
#ifndef SIMHIP_STREAM_INT_H
#define SIMHIP_STREAM_INT_H

#include "internal.h"

/* Each device's null stream, made on first use (stream.c). */
extern struct sh_stream *sh_null_streams[SH_MAX_DEVICES];

/* The per-thread default streams' key (stream.c), deleted at teardown
 * (worker.c) if it was made. */
extern pthread_key_t sh_pt_key;
extern bool sh_pt_key_made;

/* Start s's worker thread (worker.c). 0, or -1 if it could not start. */
int sh_worker_start_locked(struct sh_stream *s);

#endif
