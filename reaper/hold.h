/*
 * hold.h - the release hold: when a real unregister may run.
 *
 * On CUDA the real cuMemHostUnregister waits for the whole device and holds
 * a driver lock meanwhile (DESIGN section 3): run while other streams are
 * busy, safepin's own unregister would stall the program's launches on
 * every thread as badly as the program's call would have. So once a
 * release's markers have completed, the reaper holds it (the range stays
 * RELEASING: unregistered for the program, G4) and makes the real call
 *   - when the program and the device are quiet (every stream known to
 *     safepin answers its query at two polls in a row, hold_poll_us apart,
 *     and the program made no register or unregister call between them):
 *     one release at a time, the device asked again before each;
 *   - at once when the memory is needed: its memory was freed or unmapped
 *     (a deferred free or unmap waits; such a range is never held), a
 *     thread waits for the release (a register overlapping it, a fixed
 *     mmap over its deferred unmap, unregister=sync, a context being
 *     destroyed, the exit drain), or the held ranges pin more than
 *     hold_max_mb, or one was held hold_max_ms (all of them then).
 * So it holds at most hold_max_mb of pinned memory (256 MiB by default),
 * each range at most hold_max_ms (2 s), and never memory the program gave
 * back. An identical re-register revives a held range without any real
 * call. hold=auto holds for runtimes whose unregister is device-wide
 * (CUDA); hold=on for every runtime; hold=off never. The reasons, and the
 * figures behind them, are in hold.c above sp_hold_take.
 *
 * Everything here is guarded by the registry lock. Callers: reaper.c,
 * thread.c, waits.c, actions.c.
 */
#ifndef SAFEPIN_HOLD_H
#define SAFEPIN_HOLD_H

#include <stdint.h>

#include "registry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Lock held. Takes from the batch (linked by ->release; markers completed
 * for releases submitted up to mark_seq) the ranges to hold, which stay
 * in_batch; returns the rest, to be released now. Batches are linked
 * through reaper.c's part of each range (sp_reaper_batch_next). */
sp_range *sp_hold_keep(sp_range *batch, uint64_t mark_seq);

/* Lock held. 1 if the hold may have ended (forced, or time to poll). */
int sp_hold_due(void);

/* 1 if releases of runtime rt are held at all (hold=on, or auto and its
 * unregister waits for the whole device). */
int sp_hold_runtime(int rt);

/* Lock held (released while it asks the runtime whether the device is
 * idle). The held ranges, linked by ->release, if their hold has ended,
 * with the mark sequence they were held under; else NULL. */
sp_range *sp_hold_take(uint64_t *mark_seq);

/* Lock held. The absolute monotonic time of the next poll, 0 if nothing
 * is held. */
uint64_t sp_hold_next_poll(void);

/* Lock held. A thread starts (+1) or stops (-1) waiting for releases: held
 * ones are let go at once while anyone waits. */
void sp_hold_need(int delta);

/* Lock held. The program freed or unmapped the memory of a range, which may
 * be held: it goes at the reaper's next pass. */
void sp_hold_freed(void);

/* Lock held. Bytes held now. */
size_t sp_hold_bytes(void);

/* Fork child and tests: forget what is held. */
void sp_hold_reset(void);

/* reaper.c's part of a range, for the hold: a batch's links (lock held)
 * and the sequence of its current release. */
sp_range *sp_reaper_batch_next(const sp_range *r);
void sp_reaper_batch_link(sp_range *r, sp_range *next);
uint64_t sp_reaper_release_seq(const sp_range *r);

#ifdef __cplusplus
}
#endif
#endif
