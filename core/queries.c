/*
 * queries.c - what the program asks of memory safepin tracks: the device
 * free of a pointer, attribute and flag queries, and copies of host ranges
 * whose release is pending (unregistered for the program, still pinned).
 */
#include "core.h"
#include "core_internal.h"

/* Never registered by anyone: what the runtime says of unregistered memory. */
static char probe_byte;

int sp_core_is_probe(const void *q) { return q == (const void *)&probe_byte; }

/* ---- device frees ------------------------------------------------------------ */

int sp_core_device_free(int rt, const sp_call *c, void *p)
{
    const sp_rt_ops *o = sp_rt(rt);
    int defer = sp_tls_in_hostfn && o->defer_free_in_host_fn;
    if (!p)
        return o->device_free(p);
    if (sp_reg_empty() && !defer && !o->serialize_queries)
        return o->device_free(p); /* nothing to serialize with */
    sp_lock();
    sp_range *r = sp_core_settled_containing((uintptr_t)p);
    if (r && r->state == SP_RANGE_LIVE) {
        sp_diag(SP_HIPFREE_HOST_POINTER, r,
                "%s(%p)%s of host memory inside the registered range 0x%lx (%zu bytes): %s, "
                "registration untouched",
                c->name, p, sp_core_via(o, c), (unsigned long)r->base, r->size,
                o->code_name(o->err_invalid_value));
        sp_unlock();
        return o->err_invalid_value;
    }
    if (r) {
        /* Unregistered for the program: the runtime's answer for host
         * memory never registered, whether or not the release completed. */
        sp_unlock();
        return sp_tls_in_hostfn ? o->err_free_in_host_fn : o->device_free(&probe_byte);
    }
    if (defer) {
        /* A device free that synchronizes would deadlock in a host
         * function: the reaper makes it. Anything else gets the runtime's
         * own answer at once. */
        sp_unlock();
        if (sp_reg_inherited((uintptr_t)p, 1) || !o->device_pointer || !o->device_pointer(p))
            return o->device_free(p);
        sp_lock();
        if (sp_reaper_defer_call_rt(SP_ACT_DEVFREE, rt, NULL, p) == 0) {
            sp_unlock();
            sp_reaper_kick();
            return 0;
        }
    }
    uint64_t tok = sp_reg_op_begin((uintptr_t)p, 1);
    sp_unlock();
    int e = o->device_free(p);
    sp_lock();
    sp_reg_op_end(tok);
    sp_unlock();
    return e;
}

/* ---- queries ----------------------------------------------------------------- */

void *sp_core_query_begin(int rt, const void *p, uint64_t *tok)
{
    *tok = 0;
    /* A query that must be serialized is, even with no range tracked: the
     * runtime may hold registrations safepin does not (a forked child's,
     * inherited from its parent), whose unregisters pass through
     * serialized (core/unregister.c). */
    int serialize = sp_rt(rt)->serialize_queries;
    if (!p || (!serialize && sp_reg_empty()))
        return (void *)p;
    sp_lock();
    sp_range *r = sp_core_settled_containing((uintptr_t)p);
    if (r && r->state == SP_RANGE_RELEASING) {
        sp_unlock();
        return &probe_byte;
    }
    if (serialize)
        *tok = sp_reg_op_begin((uintptr_t)p, 1);
    sp_unlock();
    return (void *)p;
}

void sp_core_query_end(uint64_t tok)
{
    if (!tok)
        return;
    sp_lock();
    sp_reg_op_end(tok);
    sp_unlock();
}

void sp_core_note_use(const void *p)
{
    if (!p || sp_reg_empty())
        return;
    sp_lock();
    sp_range *r = sp_reg_find_containing((uintptr_t)p);
    if (r && r->state == SP_RANGE_LIVE)
        r->used = 1;
    sp_unlock();
}

/* ---- copies ------------------------------------------------------------------ */

/* The range whose release is pending overlapping [p, p+n), or NULL. Lock held. */
static sp_range *pending_overlap(const void *p, size_t n)
{
    if (!p)
        return NULL;
    sp_range *r = sp_reg_find_overlap((uintptr_t)p, n);
    return r && r->state == SP_RANGE_RELEASING ? r : NULL;
}

void sp_core_copy_begin(int rt, const void *a, const void *b, size_t n, void *s, sp_copy *st)
{
    st->ta = st->tb = 0;
    st->sync = 0;
    if (sp_reg_empty() || n == 0)
        return;
    sp_lock();
    sp_range *ra = pending_overlap(a, n), *rb = pending_overlap(b, n);
    if (ra && rb && rb->base < ra->base) { /* one order: tokens never wait in a cycle */
        sp_range *t = ra;
        ra = rb;
        rb = t;
    }
    if (ra == rb)
        rb = NULL;
    if (!ra) {
        ra = rb;
        rb = NULL;
    }
    st->ta = ra ? sp_reg_op_begin(ra->base, ra->size) : 0;
    st->tb = rb ? sp_reg_op_begin(rb->base, rb->size) : 0;
    st->sync = ra && !sp_tls_in_hostfn && !sp_streams_is_capturing_rt(rt, s);
    sp_unlock();
}

void sp_core_copy_end(int rt, const sp_copy *st, int code, void *s)
{
    const sp_rt_ops *o = sp_rt(rt);
    if (code == 0 && st->sync && o->stream_sync) {
        int old = sp_relaxed_enter();
        o->stream_sync(s);
        sp_relaxed_leave(old);
    }
    if (!st->ta)
        return;
    sp_lock();
    if (st->tb)
        sp_reg_op_end(st->tb);
    sp_reg_op_end(st->ta);
    sp_unlock();
}
