/*
 * hold.c - the release hold (see hold.h).
 */
#include "hold.h"
#include "lock.h"
#include "diag.h"
#include "options.h"
#include "runtime.h"
#include "streams.h"

#include <string.h>

typedef struct held {
    sp_range *r;
    uint64_t id;         /* the range it was held for (r is checked by id) */
    uint64_t seq;        /* mark sequence its markers covered */
    uint64_t since_ns;
    struct held *next;
} held;

static struct {
    held *list;
    size_t n, bytes;
    int need;            /* threads waiting for releases */
    int quiet_seen;      /* consecutive polls that found the device idle and no
                            registration call since the one before */
    uint64_t next_poll_ns;
    uint64_t activity;   /* the program's registration calls at the last poll */
    int draining;        /* found quiet: held ranges go one by one while it stays so */
    int freed;           /* a held range's memory was freed since (sp_hold_freed) */
} H;

int sp_hold_runtime(int rt)
{
    if (strcmp(sp_opt.hold, "off") == 0)
        return 0;
    if (strcmp(sp_opt.hold, "on") == 0)
        return 1;
    return sp_rt(rt)->device_wide_unregister;
}

static uint64_t poll_ns(void) { return (uint64_t)sp_opt.hold_poll_us * 1000ull; }

sp_range *sp_hold_keep(sp_range *batch, uint64_t mark_seq)
{
    sp_range *keep = NULL, *last = NULL;
    for (sp_range *r = batch, *next; r; r = next) {
        next = sp_reaper_batch_next(r);
        held *h = NULL;
        if (H.need == 0 && sp_hold_runtime(r->rt) && r->state == SP_RANGE_RELEASING &&
            (!r->freed || sp_opt.hold_freed) && sp_reaper_release_seq(r) <= mark_seq)
            h = sp_mem_calloc(1, sizeof(*h));
        if (!h) {
            if (last)
                sp_reaper_batch_link(last, r);
            else
                keep = r;
            last = r;
            continue;
        }
        h->r = r;
        h->id = r->id;
        h->seq = mark_seq;
        h->since_ns = sp_now_ns();
        h->next = H.list;
        H.list = h;
        H.n++;
        H.bytes += r->size;
        if (!H.next_poll_ns)
            H.next_poll_ns = h->since_ns + poll_ns();
    }
    if (last)
        sp_reaper_batch_link(last, NULL);
    return keep;
}

/* Lock held: 1 if the hold must end now, whatever the device does. */
static int forced(uint64_t now)
{
    if (H.need > 0)
        return 1;
    if ((uint64_t)sp_opt.hold_max_mb * 1048576ull < H.bytes)
        return 1;
    if (sp_opt.hold_max_ms > 0)
        for (held *h = H.list; h; h = h->next)
            if (now - h->since_ns >= (uint64_t)sp_opt.hold_max_ms * 1000000ull)
                return 1;
    return 0;
}

int sp_hold_due(void)
{
    if (!H.list)
        return 0;
    uint64_t now = sp_now_ns();
    return H.draining || H.freed || forced(now) || now >= H.next_poll_ns;
}

void sp_hold_freed(void)
{
    if (H.list && !sp_opt.hold_freed) {
        H.freed = 1;
        sp_lock_broadcast(); /* the reaper may sleep until its next poll */
    }
}

/* The program's register, unregister and free-of-registered calls so far
 * (a register that nests or revives counts too): any change between two
 * polls means it is still at work, whatever the device looks like. */
static uint64_t activity_now(void)
{
    return SP_STAT(registrations) +
           SP_STAT(releases_submitted) +
           SP_STAT(nested) +
           SP_STAT(revived);
}

uint64_t sp_hold_next_poll(void) { return H.list ? H.next_poll_ns : 0; }

/* The runtimes of the held ranges all idle? Lock held, released while asking. */
static int device_idle(void)
{
    int rts = 0;
    for (held *h = H.list; h; h = h->next)
        rts |= 1 << h->r->rt;
    sp_unlock();
    int idle = 1;
    for (int rt = 0; rt < SP_RT_MAX && idle; rt++)
        if (rts & 1 << rt)
            idle = sp_streams_idle(rt);
    sp_lock();
    return idle;
}

/* Lock held. The held list leaves in one batch (the hold was forced). */
static sp_range *take_all(uint64_t *mark_seq)
{
    /* Ranges revived and released again meanwhile come out with rel_seq
     * past the (smallest) sequence and get a new round of markers. */
    sp_range *batch = NULL;
    uint64_t seq = UINT64_MAX;
    held *h = H.list;
    H.list = NULL;
    H.n = H.bytes = 0;
    H.quiet_seen = 0;
    H.draining = H.freed = 0;
    H.next_poll_ns = 0;
    while (h) {
        held *next = h->next;
        sp_reaper_batch_link(h->r, batch);
        batch = h->r;
        if (h->seq < seq)
            seq = h->seq;
        sp_mem_free(h);
        h = next;
    }
    *mark_seq = seq;
    return batch;
}

/* Lock held. One held range leaves: the first whose memory the program
 * freed or unmapped (freed_only: NULL if none), else the newest. */
static sp_range *take_one(uint64_t *mark_seq, int freed_only)
{
    held **pp = &H.list;
    for (held **q = &H.list; *q; q = &(*q)->next)
        if ((*q)->r->freed) {
            pp = q;
            break;
        }
    held *h = *pp;
    if (!h || (freed_only && !h->r->freed))
        return NULL;
    *pp = h->next;
    H.n--;
    H.bytes -= h->r->size;
    sp_range *r = h->r;
    sp_reaper_batch_link(r, NULL);
    *mark_seq = h->seq;
    sp_mem_free(h);
    if (!H.list) {
        H.draining = H.freed = 0;
        H.quiet_seen = 0;
        H.next_poll_ns = 0;
    }
    return r;
}

/* When the hold ends:
 *   - at once, whatever the device does, when the memory is needed: a
 *     thread waits for the release (a register overlapping it, a fixed mmap
 *     over its deferred unmap, unregister=sync, a context destroyed, the
 *     exit drain), the held ranges pin more than hold_max_mb, one was held
 *     hold_max_ms (everything goes, in one batch), or the program freed or
 *     unmapped a held range's memory (that range goes: its deferred free
 *     keeps the bytes from the allocator, so every allocation meanwhile
 *     gets fresh pages to fault in and pin again; on simcuda's pipeline
 *     that costs more than the real unregister's wait for the device);
 *   - otherwise once the program and the device are both quiet: the device
 *     idle at two polls in a row, hold_poll_us apart, and no register or
 *     unregister call between them. A gap between two kernels of a busy
 *     stream (microseconds) is not idleness, and a program that keeps
 *     registering and unregistering is not done: a real unregister started
 *     there waits for its next kernel under the driver lock, stalling its
 *     launches. Then the held ranges go one at a time, the device asked
 *     again before each, so that a program starting again meets at most
 *     one real unregister. */
sp_range *sp_hold_take(uint64_t *mark_seq)
{
    if (!H.list)
        return NULL;
    uint64_t now = sp_now_ns();
    if (forced(now))
        return take_all(mark_seq);
    if (H.freed) {
        sp_range *r = take_one(mark_seq, 1);
        if (r)
            return r;
        H.freed = 0;
    }
    if (!H.draining && now < H.next_poll_ns)
        return NULL;
    uint64_t act_before = H.activity;
    int idle = device_idle();
    uint64_t act = activity_now();
    H.activity = act;
    now = sp_now_ns();
    if (!H.list)
        return NULL;
    if (forced(now))
        return take_all(mark_seq);
    if (!H.draining) {
        H.quiet_seen = idle && act == act_before ? H.quiet_seen + 1 : idle;
        H.next_poll_ns = now + poll_ns();
    } else if (!idle || act != act_before) {
        H.quiet_seen = 0; /* busy again: back to polling */
    }
    sp_range *r = H.quiet_seen >= 2 ? take_one(mark_seq, 0) : NULL;
    H.draining = r != NULL && H.list != NULL;
    if (!H.draining && H.next_poll_ns <= now)
        H.next_poll_ns = now + poll_ns();
    return r;
}

void sp_hold_need(int delta)
{
    H.need += delta;
    if (delta > 0 && H.list)
        sp_lock_broadcast(); /* the reaper sleeps until its next poll */
}

size_t sp_hold_bytes(void) { return H.bytes; }

void sp_hold_reset(void) { memset(&H, 0, sizeof(H)); }
