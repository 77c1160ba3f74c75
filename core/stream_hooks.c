/*
 * stream_hooks.c - the program's streams, host functions and places, as
 * the hooks see them: which streams markers must cover, the trampolines
 * that mark a host function's thread, and the end of a place (a context),
 * which settles the releases there first.
 */
#include "core.h"
#include "core_internal.h"

/* ---- streams ------------------------------------------------------------------ */

int sp_core_stream_created(int rt, int code, void *s, unsigned flags)
{
    if (code != 0 || !s)
        return code;
    const sp_rt_ops *o = sp_rt(rt);
    void *place = NULL;
    if (sp_tls_in_hostfn || !o->where || o->where(&place, NULL) != 0)
        place = NULL;
    sp_lock();
    int rc = sp_streams_add_rt(rt, s, flags, place);
    sp_unlock();
    if (rc == 0)
        return code;
    /* One safepin cannot track could run work on registered memory that no
     * marker waits for: destroyed again, and the create fails as the
     * runtime's does when it runs out of memory. */
    o->stream_destroy(s);
    return o->err_out_of_memory;
}

int sp_core_stream_destroy(int rt, void *s)
{
    if (sp_tls_in_hostfn && !sp_rt(rt)->defer_destroy_in_host_fn)
        return 0; /* the runtime refuses it there, and the stream lives on (G10) */
    if (!sp_streams_destroy_rt(rt, s))
        return 0;
    /* From a host function: the reaper leaves the tail marker and destroys
     * the stream (no runtime call here). */
    sp_lock();
    sp_reaper_poke();
    sp_unlock();
    sp_reaper_kick();
    return 1;
}

/* ---- host functions ---------------------------------------------------------- */

typedef struct trampoline {
    sp_host_fn fn;
    sp_stream_cb cb;
    void *ud;
    int persistent; /* captured: runs on every graph replay, never freed */
} trampoline;

static void run_host_fn(void *arg)
{
    trampoline *t = arg;
    sp_host_fn fn = t->fn;
    void *ud = t->ud;
    if (!t->persistent)
        sp_mem_free(t);
    SP_TRACE("host function %p(%p) starts", (void *)fn, ud);
    sp_tls_in_hostfn++;
    fn(ud);
    sp_tls_in_hostfn--;
}

static void run_callback(void *s, int status, void *arg)
{
    trampoline *t = arg;
    sp_stream_cb cb = t->cb;
    void *ud = t->ud;
    if (!t->persistent)
        sp_mem_free(t);
    SP_TRACE("stream callback %p(%p) starts", (void *)cb, ud);
    sp_tls_in_hostfn++;
    cb(s, status, ud);
    sp_tls_in_hostfn--;
}

static trampoline *make_trampoline(int rt, void *s, void *ud)
{
    trampoline *t = sp_mem_calloc(1, sizeof(*t));
    if (t) {
        t->ud = ud;
        sp_lock();
        t->persistent = sp_streams_is_capturing_rt(rt, s);
        sp_unlock();
    }
    return t;
}

sp_host_fn sp_core_host_fn(int rt, void *s, sp_host_fn fn, void *ud, void **arg)
{
    trampoline *t = fn ? make_trampoline(rt, s, ud) : NULL;
    if (!t)
        return NULL;
    t->fn = fn;
    *arg = t;
    return run_host_fn;
}

sp_stream_cb sp_core_stream_cb(int rt, void *s, sp_stream_cb cb, void *ud, void **arg)
{
    trampoline *t = cb ? make_trampoline(rt, s, ud) : NULL;
    if (!t)
        return NULL;
    t->cb = cb;
    *arg = t;
    return run_callback;
}

void sp_core_host_fn_failed(void *arg) { sp_mem_free(arg); }

/* ---- places ------------------------------------------------------------------- */

void sp_core_place_made(int rt, void *place)
{
    sp_lock();
    sp_streams_add_place(rt, place);
    sp_unlock();
}

void sp_core_place_ending(int rt, void *place)
{
    if (sp_tls_in_hostfn || !place)
        return;
    sp_lock();
    for (;;) {
        sp_range *first = NULL;
        for (sp_range *r = sp_reg_find_overlap(0, SIZE_MAX); r; r = sp_reg_next(r))
            if (r->rt == rt && r->place == place && r->state == SP_RANGE_RELEASING) {
                first = r;
                break;
            }
        if (!first)
            break;
        /* The hold lets them go at once (a waiter). */
        sp_reaper_wait_range(first->base, first->id);
    }
    sp_unlock();
}

void sp_core_place_ended(int rt, void *place)
{
    if (!place)
        return;
    sp_lock();
    for (sp_range *r = sp_reg_find_overlap(0, SIZE_MAX), *next; r; r = next) {
        next = sp_reg_next(r);
        if (r->rt != rt || r->place != place || r->state != SP_RANGE_LIVE || r->registering)
            continue;
        sp_log(SP_LOG_INFO, "info",
               "0x%lx (%zu bytes) was still registered when its context was destroyed: the "
               "runtime (%s) dropped the registration with it",
               (unsigned long)r->base, r->size, sp_rt(rt)->name);
        sp_history_add(SP_EV_RELEASED, r->base, r->size, NULL);
        sp_site_free(sp_sites(r)->reg);
        sp_site_free(sp_sites(r)->unreg);
        sp_sites(r)->reg = sp_sites(r)->unreg = NULL;
        sp_reg_remove(r);
    }
    sp_streams_drop_place(rt, place);
    sp_lock_broadcast();
    sp_unlock();
}
