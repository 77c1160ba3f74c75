/*
 * reaper_internal.h - shared by the files of reaper/ only: the deferred
 * actions (actions.c) as the reaper thread (reaper.c) runs them. Lock held
 * unless said otherwise.
 */
#ifndef SAFEPIN_REAPER_INTERNAL_H
#define SAFEPIN_REAPER_INTERNAL_H

#include <stddef.h>

#include "registry.h"

/* reaper.c: wait for the reaper to make progress (starting it, or doing
 * its work here when no thread can be started). */
void sp_reaper_wait_progress(void);

/* reaper.c: r (claimed) was freed: if it is in its revive grace, the
 * grace is over (the reaper is woken by sp_reaper_kick). */
void sp_reaper_note_freed(const sp_range *r);

/* The actions over r whose releases are all done (r's release completed,
 * or r was revived) become ready; 1 if any did. */
int sp_actions_settle(const sp_range *r);
/* r's release failed: the actions waiting for it are dropped (its memory
 * may still be pinned: never freed or unmapped). */
void sp_actions_drop(const sp_range *r);
int sp_actions_any_ready(void);
/* Runs the ready ones (released while they run). */
void sp_actions_run_ready(void);
/* Deferred calls queued or running; run them, in the order they came
 * (released while they run). */
int sp_actions_calls(void);
void sp_actions_run_calls(void);
/* Anything deferred at all; how many (the soak's table sizes). */
int sp_actions_pending(void);
size_t sp_actions_count(void);
/* Fork child: carry out the ready ones (see actions.c), then forget all. */
void sp_actions_fork_child(int consistent);
void sp_actions_fork_reset(void);

#endif
