/*
 * actions.c - deferred actions (G2): frees and unmaps of memory whose
 * release is pending, carried out once no release they wait for is
 * pending; device frees deferred from host functions. The reaper thread
 * (thread.c) runs them; the lock guards everything here.
 */
#include "reaper.h"
#include "reaper_internal.h"
#include "diag.h"
#include "hold.h"
#include "runtime.h"

#include <errno.h>
#include <string.h>

typedef struct sp_action {
    sp_act_kind kind;
    uintptr_t addr;   /* FREE: the block; MUNMAP: the pages still to unmap
                         (len 0: none left); DEVFREE: the pointer */
    size_t len;
    uintptr_t w_addr; /* it waits for the releases overlapping this span */
    size_t w_len;
    uint64_t max_id;  /* ranges with a higher id came later: never waited for */
    int rt;           /* DEVFREE: the runtime whose device free it is (runtime.h) */
    void *place;      /* DEVFREE: the CUDA context current at the call */
    uintptr_t sh_addr; /* its shadow span in the registry (sp_reg_shadow) */
    size_t sh_len;
    unsigned ready : 1;   /* nothing left to wait for: the reaper runs it */
    unsigned running : 1; /* being run by the reaper, outside the lock */
    struct sp_action *next;
} sp_action;

static struct {
    sp_action *actions;
    sp_action *calls;  /* device frees from host functions, newest first */
    int calls_running; /* calls taken off A.calls, not finished yet */
} A;


static int overlaps(uintptr_t a, size_t alen, uintptr_t b, size_t blen)
{
    return alen && blen && a < b + blen && b < a + alen;
}

static int real_unmap(uintptr_t a, size_t len) { return sp_libc_munmap((void *)a, len); }

/* The registry's filter keeps the action's span in view of the memory
 * hooks until it has run, though the range it waited for is gone: a fixed
 * mapping, a munmap or a MAP_FIXED_NOREPLACE there waits for it (settle). */
static void push_action(sp_action *a)
{
    a->sh_addr = a->addr;
    a->sh_len = a->len;
    sp_reg_shadow(a->sh_addr, a->sh_len, 1);
    a->next = A.actions;
    A.actions = a;
}

static void shadow_off(sp_action *a)
{
    sp_reg_shadow(a->sh_addr, a->sh_len, -1);
    a->sh_len = 0;
}

void sp_reaper_claim(sp_range *r)
{
    if (r->state == SP_RANGE_LIVE)
        sp_reaper_release(r);
    r->freed = 1;
    sp_reaper_note_freed(r);
    sp_hold_freed(); /* if r is held, its memory is needed now */
}

static int see_registering(sp_range *r, void *arg)
{
    (void)arg;
    return r->registering;
}

void sp_reaper_wait_registering(uintptr_t addr, size_t len)
{
    while (sp_reg_for_overlaps(addr, len, see_registering, NULL))
        sp_lock_wait();
}

/* A range an action over it must wait for: its release is pending. */
static int unreleased(sp_range *r, void *arg)
{
    const uint64_t *max_id = arg;
    return r->state == SP_RANGE_RELEASING && !r->released && r->id <= *max_id;
}

static int blocked(uintptr_t w_addr, size_t w_len, uint64_t max_id)
{
    return sp_reg_for_overlaps(w_addr, w_len, unreleased, &max_id);
}

static int max_id_of(sp_range *r, void *arg)
{
    uint64_t *m = arg;
    if (r->id > *m)
        *m = r->id;
    return 0;
}

/* A new action of this kind over [addr, addr+len), waiting for the releases
 * pending over the same span. 1 if deferred, 0 if nothing is pending there,
 * -1 if out of memory. */
static int new_action(sp_act_kind kind, uintptr_t addr, size_t len)
{
    if (!blocked(addr, len, UINT64_MAX))
        return 0;
    sp_action *a = sp_mem_calloc(1, sizeof(*a));
    if (!a)
        return -1;
    a->kind = kind;
    a->addr = a->w_addr = addr;
    a->len = a->w_len = len;
    sp_reg_for_overlaps(addr, len, max_id_of, &a->max_id);
    push_action(a);
    if (kind == SP_ACT_FREE)
        SP_COUNT(deferred_frees);
    else
        SP_COUNT(deferred_unmaps);
    return 1;
}

/* Out of memory for an action: wait for the releases over the span and
 * return 1 (the caller acts now), or, where waiting is impossible, 0. */
static int wait_instead(uintptr_t addr, size_t len, int may_wait, const char *what)
{
    if (!may_wait) {
        sp_log(SP_LOG_ERROR, "runtime-error",
               "out of memory: %s of 0x%lx (%zu bytes) dropped rather than run early",
               what, (unsigned long)addr, len);
        return 0;
    }
    while (blocked(addr, len, UINT64_MAX)) {
        SP_COUNT(waits_for_release);
        sp_reaper_wait_progress();
    }
    return 1;
}

int sp_reaper_defer_free(void *p, size_t len, int may_wait)
{
    uintptr_t a = (uintptr_t)p;
    int rc = new_action(SP_ACT_FREE, a, len ? len : 1);
    if (rc >= 0)
        return rc;
    return !wait_instead(a, len ? len : 1, may_wait, "free");
}

/* Pages [lo, hi) of registrations: unmapped once their releases are done,
 * except those whose unmap is already deferred. */
static void defer_pages(uintptr_t lo, uintptr_t hi, int may_wait)
{
    uintptr_t cur = lo;
    while (cur < hi) {
        uintptr_t next = hi;
        const sp_action *cover = NULL;
        for (const sp_action *a = A.actions; a; a = a->next) {
            if (a->kind != SP_ACT_MUNMAP || !a->len)
                continue;
            if (a->addr <= cur && cur - a->addr < a->len) {
                cover = a;
                break;
            }
            if (a->addr > cur && a->addr < next)
                next = a->addr;
        }
        if (cover) {
            cur = cover->addr + cover->len < hi ? cover->addr + cover->len : hi;
            continue;
        }
        int rc = new_action(SP_ACT_MUNMAP, cur, next - cur);
        if (rc == 0 || (rc < 0 && wait_instead(cur, next - cur, may_wait, "munmap")))
            real_unmap(cur, next - cur);
        cur = next;
    }
}

void sp_reaper_defer_unmap(uintptr_t addr, size_t len, int may_wait)
{
    size_t pg = sp_page_size();
    uintptr_t end = addr + len, pos = addr;
    sp_range *r;
    /* One range at a time, looked up again after each step: a step may wait
     * (out of memory), and the registry changes meanwhile. */
    while (pos < end && (r = sp_reg_find_overlap(pos, end - pos)) != NULL) {
        uintptr_t lo = r->base & ~(pg - 1);
        uintptr_t hi = (r->base + r->size + pg - 1) & ~(pg - 1);
        if (lo < pos)
            lo = pos;
        if (hi > end || hi < lo)
            hi = end;
        if (lo > pos)
            real_unmap(pos, lo - pos);
        defer_pages(lo, hi, may_wait);
        pos = hi;
    }
    if (pos < end)
        real_unmap(pos, end - pos);
}

static int unreleased_any(sp_range *r, void *arg)
{
    (void)arg;
    return r->state == SP_RANGE_RELEASING && !r->released;
}

int sp_reaper_pending_overlaps(uintptr_t addr, size_t len)
{
    if (len == 0)
        len = 1;
    for (sp_action *a = A.actions; a; a = a->next)
        if (a->kind != SP_ACT_DEVFREE && overlaps(a->addr, a->len, addr, len))
            return 1;
    return sp_reg_for_overlaps(addr, len, unreleased_any, NULL);
}

void sp_reaper_wait_pending(uintptr_t addr, size_t len)
{
    int counted = 0;
    sp_hold_need(1);
    while (sp_reaper_pending_overlaps(addr, len)) {
        if (!counted++)
            SP_COUNT(waits_for_release);
        sp_reaper_wait_progress();
    }
    sp_hold_need(-1);
}

static void unlink_action(sp_action *a)
{
    sp_action **pp = &A.actions;
    while (*pp && *pp != a)
        pp = &(*pp)->next;
    if (*pp) {
        *pp = a->next;
        shadow_off(a);
    }
}

void sp_reaper_unmap_now(uintptr_t addr, size_t len)
{
    uintptr_t end = addr + len;
restart:
    for (sp_action *a = A.actions; a; a = a->next) {
        if (a->kind != SP_ACT_MUNMAP || !overlaps(a->addr, a->len, addr, len))
            continue;
        if (a->running) {
            /* The reaper is unmapping it now: that never waits for us. */
            sp_lock_wait();
            goto restart;
        }
        uintptr_t a_end = a->addr + a->len;
        uintptr_t lo = a->addr > addr ? a->addr : addr;
        uintptr_t hi = a_end < end ? a_end : end;
        real_unmap(lo, hi - lo);
        if (lo > a->addr && hi < a_end) {
            /* A hole in the middle: the upper part becomes an action of its
             * own, waiting for the same releases. */
            sp_action *up = sp_mem_alloc(sizeof(*up));
            if (up) {
                *up = *a;
                up->addr = hi;
                up->len = a_end - hi;
                push_action(up);
            } else {
                sp_log(SP_LOG_ERROR, "runtime-error",
                       "out of memory: deferred munmap of 0x%lx (%zu bytes) dropped",
                       (unsigned long)hi, (size_t)(a_end - hi));
            }
            a->len = lo - a->addr;
        } else if (lo > a->addr) {
            a->len = lo - a->addr;
        } else {
            a->addr = hi;
            a->len = a_end - hi;
        }
        if (a->len == 0) {
            unlink_action(a);
            sp_mem_free(a);
            goto restart;
        }
    }
}

int sp_reaper_defer_call_rt(sp_act_kind kind, int rt, void *place, void *addr)
{
    sp_action *act = sp_mem_calloc(1, sizeof(*act));
    if (!act)
        return -1;
    act->kind = kind;
    act->rt = rt;
    act->place = place;
    act->addr = (uintptr_t)addr;
    act->next = A.calls;
    A.calls = act;
    SP_COUNT(deferred_hipfree);
    sp_reaper_poke();
    return 0;
}

static void run_action(const sp_action *a)
{
    switch (a->kind) {
    case SP_ACT_FREE:
        sp_libc_free((void *)a->addr);
        break;
    case SP_ACT_MUNMAP:
        if (a->len && real_unmap(a->addr, a->len) != 0)
            sp_log(SP_LOG_WARN, "runtime-error", "deferred munmap(0x%lx, %zu) failed: %s",
                   (unsigned long)a->addr, a->len, strerror(errno));
        break;
    case SP_ACT_DEVFREE: {
        const sp_rt_ops *o = sp_rt(a->rt);
        int e = o->mem_free(a->place, (void *)a->addr);
        if (e != 0)
            sp_diag(SP_RUNTIME_ERROR, NULL, "deferred %s(%p) from a host function returned %d",
                    o->free_name, (void *)a->addr, e);
        break;
    }
    }
}

/* Lock held: the actions over r whose releases are all done (r's release
 * completed, or r was revived) become ready. 1 if any did. */
int sp_actions_settle(const sp_range *r)
{
    int ready = 0;
    for (sp_action *a = A.actions; a; a = a->next) {
        if (!a->ready && overlaps(a->w_addr, a->w_len, r->base, r->size) &&
            !blocked(a->w_addr, a->w_len, a->max_id)) {
            a->ready = 1;
            ready = 1;
        }
    }
    return ready;
}

/* Lock held: drop the actions waiting for r, unrun (r's real unregister
 * failed: its memory may still be pinned and device-visible, so it is never
 * freed or unmapped: a leak, never a use-after-free). */
void sp_actions_drop(const sp_range *r)
{
    for (sp_action **pp = &A.actions; *pp;) {
        sp_action *a = *pp;
        if (!a->running && a->max_id >= r->id &&
            overlaps(a->w_addr, a->w_len, r->base, r->size)) {
            *pp = a->next;
            shadow_off(a);
            sp_mem_free(a);
        } else {
            pp = &a->next;
        }
    }
}

int sp_actions_any_ready(void)
{
    for (const sp_action *a = A.actions; a; a = a->next)
        if (a->ready && !a->running)
            return 1;
    return 0;
}

/* Lock held on entry and exit: run ready actions outside it. */
void sp_actions_run_ready(void)
{
    sp_action *ready[32];
    for (;;) {
        int n = 0;
        for (sp_action *a = A.actions; a && n < 32; a = a->next)
            if (a->ready && !a->running) {
                a->running = 1;
                ready[n++] = a;
            }
        if (n == 0)
            return;
        sp_unlock();
        for (int i = 0; i < n; i++)
            run_action(ready[i]);
        sp_lock();
        for (int i = 0; i < n; i++) {
            unlink_action(ready[i]);
            sp_mem_free(ready[i]);
        }
        sp_lock_broadcast();
    }
}

/* Lock held (released while they run): the deferred calls (device frees
 * from host functions), in the order they came. */
void sp_actions_run_calls(void)
{
    sp_action *calls = A.calls;
    A.calls = NULL;
    A.calls_running = 1;
    sp_unlock();
    while (calls) {
        sp_action *next = calls->next;
        run_action(calls);
        sp_mem_free(calls);
        calls = next;
    }
    sp_lock();
    A.calls_running = 0;
    sp_lock_broadcast();
}

/* In a forked child: what the program freed or unmapped before the fork is
 * gone for the child too. The parent defers those until its releases are
 * done; the child has no device work on that memory, so it carries out the
 * ones whose releases had completed at the fork (ready), rather than keep
 * memory the program gave up (a mapping of the child's own there would
 * fail, G9). An action still waiting for a release is left: the child's
 * copy of the runtime still has that memory registered (its real
 * unregister had not run), and memory handed back to the child's allocator
 * would come back registered (the runtime's 712, or its abort on the next
 * unregister); kept, it is a leak in the child and nothing else.
 * consistent: the parent's fork handler held the lock, so the action list
 * is whole; the actions the parent's reaper was running outside the lock
 * are left too (they may have happened already: a block freed twice, or
 * pages unmapped after another thread mapped them again, would be worse
 * than a leak). Otherwise (a fork from a signal handler that interrupted
 * safepin's own code) the list cannot be read, and nothing is carried out. */
void sp_actions_fork_child(int consistent)
{
    if (!consistent)
        return;
    for (const sp_action *a = A.actions; a; a = a->next)
        if (a->ready && !a->running && a->kind != SP_ACT_DEVFREE)
            run_action(a);
}


int sp_actions_calls(void) { return A.calls != NULL || A.calls_running; }
int sp_actions_pending(void) { return A.actions != NULL || sp_actions_calls(); }

size_t sp_actions_count(void)
{
    size_t n = 0;
    for (sp_action *a = A.actions; a; a = a->next)
        n++;
    for (sp_action *a = A.calls; a; a = a->next)
        n++;
    return n;
}

void sp_actions_fork_reset(void) { memset(&A, 0, sizeof(A)); }
