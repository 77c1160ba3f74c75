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
    int idle_seen;       /* consecutive polls that found the device idle */
    uint64_t next_poll_ns;
} H;

/* 1 if releases of runtime rt are held at all. */
static int holds_runtime(int rt)
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
        if (H.need == 0 && holds_runtime(r->rt) && r->state == SP_RANGE_RELEASING &&
            sp_reaper_release_seq(r) <= mark_seq)
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
    return forced(now) || now >= H.next_poll_ns;
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
    for (int rt = 0; rt < SP_RT_N && idle; rt++)
        if (rts & 1 << rt)
            idle = sp_streams_idle(rt);
    sp_lock();
    return idle;
}

sp_range *sp_hold_take(uint64_t *mark_seq)
{
    if (!H.list)
        return NULL;
    uint64_t now = sp_now_ns();
    if (!forced(now)) {
        if (now < H.next_poll_ns)
            return NULL;
        /* Idle at two polls in a row: a gap between two kernels of a busy
         * stream (microseconds) is not idleness, and a real unregister
         * started there would wait for the next kernel under the lock. */
        int idle = device_idle();
        H.idle_seen = idle ? H.idle_seen + 1 : 0;
        now = sp_now_ns();
        H.next_poll_ns = now + poll_ns();
        if (!H.list || (H.idle_seen < 2 && !forced(now)))
            return NULL;
    }
    /* Let everything go, in one batch; ranges revived and released again
     * meanwhile come out with rel_seq past the (smallest) sequence and get
     * a new round of markers. */
    sp_range *batch = NULL;
    uint64_t seq = UINT64_MAX;
    held *h = H.list;
    H.list = NULL;
    H.n = H.bytes = 0;
    H.idle_seen = 0;
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

void sp_hold_need(int delta)
{
    H.need += delta;
    if (delta > 0 && H.list)
        sp_lock_broadcast(); /* the reaper sleeps until its next poll */
}

size_t sp_hold_bytes(void) { return H.bytes; }

void sp_hold_reset(void) { memset(&H, 0, sizeof(H)); }
