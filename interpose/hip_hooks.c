/*
 * hip_hooks.c - the logic of the HIP hooks: register, unregister, hipFree,
 * attribute queries, streams, capture and host functions.
 */
#include "internal.h"
#include "runtime.h"

#include <string.h>

#include "maps.h"

/* Never registered by anyone: what the runtime says of unregistered memory. */
static char probe_byte;

/* 1 if the runtime already has an object at p (its attributes name a host
 * or device pointer). Not from a host function (no runtime call there). */
static int runtime_knows(const void *p)
{
    if (sp_tls_in_hostfn || !sp_real.hipPointerGetAttributes)
        return 0;
    hipPointerAttribute_t a;
    memset(&a, 0, sizeof(a));
    int old = sp_relaxed_enter();
    hipError_t e = sp_real.hipPointerGetAttributes(&a, p);
    sp_relaxed_leave(old);
    return e == hipSuccess && (a.hostPointer || a.devicePointer);
}

/* 1 if attributes a (an answer of the real runtime) name device memory.
 * The memory-type values changed in HIP 6.0 (5.x: host 0, device 1; 6.x:
 * unregistered 0, host 1, device 2) within the same struct layout, so they
 * are read by the runtime's version, asked once. */
static int attr_is_device(const hipPointerAttribute_t *a)
{
    static int device_type = -1; /* the runtime's value for device memory */
    int t = __atomic_load_n(&device_type, __ATOMIC_RELAXED);
    if (t < 0) {
        int v = 0;
        if (!sp_real.hipRuntimeGetVersion || sp_real.hipRuntimeGetVersion(&v) != hipSuccess)
            v = 0;
        t = v >= 60000000 ? 2 : 1;
        __atomic_store_n(&device_type, t, __ATOMIC_RELAXED);
    }
    return (int)a->memoryType == t;
}

/* The innermost range containing p, once no register of it is in flight.
 * Lock held (released while waiting). */
static sp_range *settled_containing(uintptr_t p)
{
    for (;;) {
        sp_range *r = sp_reg_find_containing(p);
        if (!r || !r->registering)
            return r;
        sp_lock_wait();
    }
}

/* ---- register ------------------------------------------------------------ */

/* hipInvalidValue, with its diagnostic, for arguments no runtime accepts. */
static hipError_t check_register_args(void *p, size_t size, unsigned int flags)
{
    if (!p || size == 0) {
        sp_diag(SP_INVALID_ARGUMENT, NULL, "hipHostRegister(%p, %zu, 0x%x): %s", p, size, flags,
                p ? "size 0" : "NULL pointer");
        return hipErrorInvalidValue;
    }
    if (size > UINTPTR_MAX - (uintptr_t)p) {
        sp_diag(SP_INVALID_ARGUMENT, NULL,
                "hipHostRegister(%p, %zu, 0x%x): the range wraps around the address space", p,
                size, flags);
        return hipErrorInvalidValue;
    }
    return hipSuccess;
}

/* What the ranges overlapping a new registration make of it: nested in an
 * identical live one, refused by another live one, reviving an identical
 * pending one, or waiting for a pending release. Lock held (released while
 * waiting). Returns 0 once nothing overlaps (the caller inserts), else 1
 * with *e the answer; *site_kept says whether a range took site. 2: the
 * memory overlaps a CUDA range (another driver pins it too, as bare): the
 * call passes through untracked. 3: it overlaps a live range, but has pages
 * no runtime can pin (unmapped, PROT_NONE, read-only without the read-only
 * flag): the runtime refuses it with its own code, which comes first (G10). */
static int settle_overlaps(void *p, size_t size, unsigned int flags, sp_site *site,
                           hipError_t *e, int *site_kept)
{
    uintptr_t base = (uintptr_t)p;
    for (;;) {
        sp_range *r = sp_reg_find_overlap(base, size);
        if (!r)
            return 0;
        if (r->registering) {
            sp_lock_wait();
            continue;
        }
        if (r->rt != SP_RT_HIP)
            return 2; /* the CUDA driver's registration: HIP's is its own */
        int same = r->base == base && r->size == size && r->flags == flags;
        if (r->state == SP_RANGE_LIVE && same) {
            r->nest++;
            SP_COUNT(nested);
            sp_history_add(SP_EV_NEST, base, size, site);
            sp_diag(SP_NESTED_REGISTER, r, "hipHostRegister(%p, %zu, 0x%x): nested (count %d)",
                    p, size, flags, r->nest);
            *e = hipSuccess;
            return 1;
        }
        if (r->state == SP_RANGE_LIVE && sp_maps_pinnable(base, size, flags & SP_REGISTER_READ_ONLY) == 0)
            return 3; /* the runtime refuses it for its pages first (G10) */
        if (r->state == SP_RANGE_LIVE) {
            SP_COUNT(overlapping_refused);
            sp_history_add(SP_EV_REFUSED, base, size, site);
            sp_diag(SP_OVERLAPPING_REGISTER, r,
                    "hipHostRegister(%p, %zu, 0x%x) overlaps the live registration 0x%lx (%zu bytes, "
                    "flags 0x%x): hipErrorHostMemoryAlreadyRegistered",
                    p, size, flags, (unsigned long)r->base, r->size, r->flags);
            *e = hipErrorHostMemoryAlreadyRegistered;
            return 1;
        }
        /* RELEASING: revive an identical one (unless its pages can no longer
         * be pinned: mprotect is not watched, so the mappings are asked; the
         * runtime's refusal comes first, G10), otherwise wait for it. */
        if (sp_opt.revive && same && sp_maps_pinnable(base, size, flags & SP_REGISTER_READ_ONLY) &&
            sp_reaper_revive(r)) {
            SP_COUNT(revived);
            sp_site_free(sp_sites(r)->reg);
            sp_site_free(sp_sites(r)->unreg);
            sp_sites(r)->reg = site;
            sp_sites(r)->unreg = NULL;
            *site_kept = 1;
            sp_history_add(SP_EV_REVIVE, base, size, site);
            *e = hipSuccess;
            return 1;
        }
        if (sp_tls_in_hostfn) {
            /* Waiting here could wait for this very host function. */
            sp_diag(SP_OVERLAPPING_REGISTER, r,
                    "hipHostRegister(%p, %zu) from a host function overlaps 0x%lx, whose release "
                    "is pending: hipErrorHostMemoryAlreadyRegistered",
                    p, size, (unsigned long)r->base);
            *e = hipErrorHostMemoryAlreadyRegistered;
            return 1;
        }
        SP_COUNT(waits_for_release);
        if (!sp_streams_thread_captures()) {
            sp_reaper_wait_range(r->base, r->id);
            continue;
        }
        if (sp_reaper_wait_range_unless_capture(r->base, r->id) < 0) {
            /* The release waits for a capture to end, maybe this thread's. */
            sp_diag(SP_OVERLAPPING_REGISTER, r,
                    "hipHostRegister(%p, %zu) during this thread's capture overlaps 0x%lx, whose "
                    "release waits for a capture to end: hipErrorHostMemoryAlreadyRegistered",
                    p, size, (unsigned long)r->base);
            *e = hipErrorHostMemoryAlreadyRegistered;
            return 1;
        }
    }
}

/* The real register of r (inserted, registering), serialized by tok; r
 * stays if it succeeded, else it goes. Lock NOT held. */
static hipError_t register_range(sp_range *r, void *p, size_t size, unsigned int flags,
                                 uint64_t tok)
{
    /* Memory the runtime already owns (hipHostMalloc, or registered where
     * safepin did not see it): its register is the runtime's business, and
     * so is the matching unregister. */
    int foreign = runtime_knows(p);
    hipError_t e = sp_real.hipHostRegister(p, size, flags);

    sp_lock();
    sp_reg_op_end(tok);
    if (foreign)
        sp_log(SP_LOG_INFO, "info",
               "hipHostRegister(%p, %zu): the runtime already knows this memory (hipHostMalloc or "
               "a registration made elsewhere); passed through, not tracked: returned %d",
               p, size, (int)e);
    if (foreign || e != hipSuccess) {
        sp_site_free(sp_sites(r)->reg);
        sp_sites(r)->reg = NULL;
        sp_reg_remove(r);
    } else {
        r->registering = 0;
        SP_COUNT(registrations);
        sp_history_add(SP_EV_REGISTER, r->base, size, sp_sites(r)->reg);
    }
    sp_lock_broadcast();
    sp_unlock();
    return e;
}

hipError_t sp_host_register(void *p, size_t size, unsigned int flags)
{
    sp_init();
    if (!SP_REAL_HIP(hipHostRegister))
        return hipErrorNotInitialized;
    hipError_t e = check_register_args(p, size, flags);
    if (e != hipSuccess)
        return e;
    if (sp_reg_inherited((uintptr_t)p, size)) {
        /* A forked child, on memory its parent had registered: the runtime's
         * state there is unknown, so the call goes to it as it is (G9). */
        sp_log(SP_LOG_INFO, "info",
               "hipHostRegister(%p, %zu): memory registered by the parent process before fork; "
               "passed through, not tracked", p, size);
        return sp_real.hipHostRegister(p, size, flags);
    }
    int dev = 0;
    if (sp_real.hipGetDevice && sp_real.hipGetDevice(&dev) != hipSuccess)
        dev = 0;
    sp_site *site = sp_site_capture_entry();

    sp_range *r = NULL;
    uint64_t tok = 0;
    int site_kept = 0;
    sp_lock();
    int settled = settle_overlaps(p, size, flags, site, &e, &site_kept);
    if (!settled && (r = sp_reg_insert((uintptr_t)p, size, flags, dev)) != NULL) {
        r->registering = 1;
        sp_sites(r)->reg = site;
        site_kept = 1;
        tok = sp_reg_op_begin((uintptr_t)p, size);
    }
    sp_unlock();
    if (!site_kept)
        sp_site_free(site);

    if (settled == 2) {
        sp_log(SP_LOG_INFO, "info",
               "hipHostRegister(%p, %zu): memory the CUDA driver registered; passed through, "
               "not tracked", p, size);
        return sp_real.hipHostRegister(p, size, flags);
    }
    if (settled == 3) {
        /* Serialized with the overlapping range's own calls (G5). */
        tok = sp_reg_op_enter((uintptr_t)p, size);
        e = sp_real.hipHostRegister(p, size, flags);
        sp_reg_op_leave(tok);
        sp_log(SP_LOG_INFO, "info",
               "hipHostRegister(%p, %zu, 0x%x) overlaps a live registration and has pages no "
               "runtime can pin: the runtime's answer, %d, passed through%s",
               p, size, flags, (int)e, e == hipSuccess ? " (not tracked)" : "");
        return e;
    }
    if (settled)
        return e;
    if (r)
        return register_range(r, p, size, flags, tok);
    /* A registration safepin cannot track would have none of its guarantees
     * (a later free would leave it stale): refused, with the answer the
     * runtime gives when it runs out of memory. */
    sp_log(SP_LOG_ERROR, "runtime-error",
           "out of memory in safepin's registry: hipHostRegister(%p, %zu, 0x%x) refused with "
           "hipErrorOutOfMemory rather than registered untracked", p, size, flags);
    return hipErrorOutOfMemory;
}

/* ---- unregister ---------------------------------------------------------- */

hipError_t sp_host_unregister(void *p)
{
    sp_init();
    if (!p) {
        sp_diag(SP_INVALID_ARGUMENT, NULL, "hipHostUnregister(NULL)");
        return hipErrorInvalidValue;
    }
    uintptr_t base = (uintptr_t)p;
    sp_site *site = sp_site_capture_entry();

    sp_lock();
    sp_range *r;
    for (;;) {
        r = sp_reg_find_containing(base);
        if (r && r->registering) {
            sp_lock_wait();
            continue;
        }
        break;
    }
    if (!r || r->rt != SP_RT_HIP) {
        /* Not ours (or the CUDA driver's): the runtime answers (it may hold registrations safepin
         * never saw, or have no device at all); its error passes through. */
        int dbl = sp_reaper_recently_released(base);
        uint64_t tok = sp_reg_op_begin(base, 1);
        sp_unlock();
        hipError_t e = SP_REAL_HIP(hipHostUnregister) ? sp_real.hipHostUnregister(p)
                                                       : hipErrorHostMemoryNotRegistered;
        sp_lock();
        sp_reg_op_end(tok);
        if (e == hipErrorHostMemoryNotRegistered) {
            if (dbl)
                sp_diag(SP_DOUBLE_UNREGISTER, NULL,
                        "hipHostUnregister(%p): already unregistered (and released)", p);
            else
                sp_diag(SP_UNREGISTER_UNKNOWN, NULL, "hipHostUnregister(%p): not a registered pointer",
                        p);
        }
        sp_unlock();
        sp_site_free(site);
        return e;
    }
    if (r->base != base) {
        sp_diag(SP_UNREGISTER_INTERIOR, r,
                "hipHostUnregister(%p): %zu bytes inside the range 0x%lx (%zu bytes); the range "
                "stays %s",
                p, (size_t)(base - r->base), (unsigned long)r->base, r->size,
                r->state == SP_RANGE_LIVE ? "registered" : "pending release");
        sp_unlock();
        sp_site_free(site);
        return hipErrorHostMemoryNotRegistered;
    }
    if (r->state == SP_RANGE_RELEASING) {
        sp_diag(SP_DOUBLE_UNREGISTER, r, "hipHostUnregister(%p): already unregistered", p);
        sp_unlock();
        sp_site_free(site);
        return hipErrorHostMemoryNotRegistered;
    }
    if (--r->nest > 0) {
        sp_history_add(SP_EV_UNREGISTER, base, r->size, site);
        sp_unlock();
        sp_site_free(site);
        return hipSuccess;
    }
    sp_site_free(sp_sites(r)->unreg);
    sp_sites(r)->unreg = site;
    r->t_unregister_ns = sp_now_ns();
    sp_history_add(SP_EV_UNREGISTER, base, r->size, site);
    uint64_t id = r->id;
    sp_reaper_release(r);
    int mode = sp_opt.unreg_mode;
    if (sp_tls_in_hostfn)
        mode = SP_UNREG_ASYNC; /* waiting here could wait for this very host function */
    if (mode == SP_UNREG_SYNC && sp_streams_thread_captures())
        mode = SP_UNREG_ORDERED; /* never wait on the caller's own capture */
    if (mode == SP_UNREG_SYNC)
        sp_reaper_wait_range(base, id);
    else if (mode == SP_UNREG_ORDERED && !sp_streams_thread_captures())
        sp_reaper_wait_backlog();
    sp_unlock();
    /* Ordered: the reaper is woken after the wait, not before. Its markers,
     * recorded later, cover more work: what other threads enqueue during
     * the wait too. That is safe (G1 asks for at least the work before the
     * call) and cannot delay the release forever: the markers are recorded
     * once, so they wait only for work enqueued before a finite moment,
     * which completes as the program's own synchronization would (work that
     * never completes would block an earlier marker as well). The release
     * completes no sooner either way (its markers wait at least for what
     * this thread waits for); recorded after the wait they are mostly
     * queries of idle streams, and meanwhile the reaper records no event on
     * the streams this thread waits on. */
    if (mode == SP_UNREG_ORDERED)
        sp_wait_prior_work();
    sp_reaper_kick();
    return hipSuccess;
}

/* ---- hipFree ------------------------------------------------------------- */

hipError_t sp_hip_free(void *p)
{
    sp_init();
    if (!SP_REAL_HIP(hipFree))
        return hipErrorNotInitialized;
    if (!p)
        return sp_real.hipFree(p);
    sp_lock();
    sp_range *r = settled_containing((uintptr_t)p);
    if (r && r->state == SP_RANGE_LIVE) {
        sp_diag(SP_HIPFREE_HOST_POINTER, r,
                "hipFree(%p) of host memory inside the registered range 0x%lx (%zu bytes): "
                "hipErrorInvalidValue, registration untouched",
                p, (unsigned long)r->base, r->size);
        sp_unlock();
        return hipErrorInvalidValue;
    }
    if (r) {
        /* Unregistered for the program: the runtime's answer for host
         * memory never registered, whether or not the release completed. */
        sp_unlock();
        return sp_tls_in_hostfn ? hipErrorInvalidValue : sp_real.hipFree(&probe_byte);
    }
    if (sp_tls_in_hostfn) {
        /* hipFree of device memory synchronizes: from a host function it
         * would deadlock, so the reaper makes it. Anything else gets the
         * runtime's own answer at once. */
        sp_unlock();
        hipPointerAttribute_t a;
        memset(&a, 0, sizeof(a));
        if (sp_reg_inherited((uintptr_t)p, 1) ||
            sp_real.hipPointerGetAttributes(&a, p) != hipSuccess ||
            !attr_is_device(&a) || a.devicePointer != p)
            return sp_real.hipFree(p);
        sp_lock();
        if (sp_reaper_defer_call(SP_ACT_HIPFREE, p) == 0) {
            sp_unlock();
            sp_reaper_kick();
            return hipSuccess;
        }
    }
    uint64_t tok = sp_reg_op_begin((uintptr_t)p, 1);
    sp_unlock();
    hipError_t e = sp_real.hipFree(p);
    sp_lock();
    sp_reg_op_end(tok);
    sp_unlock();
    return e;
}

/* ---- attributes ---------------------------------------------------------- */

hipError_t sp_pointer_get_attributes(hipPointerAttribute_t *attr, const void *p)
{
    sp_init();
    if (!SP_REAL_HIP(hipPointerGetAttributes))
        return hipErrorNotInitialized;
    /* With somewhere to answer, an error says the runtime does not know p:
     * programs ask that of any pointer (PyTorch, CuPy), not an api-error. */
    if (attr)
        sp_api_probe();
    if (!attr || !p)
        return sp_real.hipPointerGetAttributes(attr, p);
    sp_lock();
    sp_range *r = settled_containing((uintptr_t)p);
    if (r && r->state == SP_RANGE_RELEASING) {
        sp_unlock();
        /* Unregistered for the program: answer as for memory never registered. */
        hipError_t e = sp_real.hipPointerGetAttributes(attr, &probe_byte);
        if (attr->hostPointer == (void *)&probe_byte)
            attr->hostPointer = (void *)p;
        if (attr->devicePointer == (void *)&probe_byte)
            attr->devicePointer = NULL;
        return e;
    }
    uint64_t tok = sp_reg_op_begin((uintptr_t)p, 1);
    sp_unlock();
    hipError_t e = sp_real.hipPointerGetAttributes(attr, p);
    sp_lock();
    sp_reg_op_end(tok);
    sp_unlock();
    return e;
}

/* ---- streams and capture ------------------------------------------------- */

/* A new stream joins the set that release markers cover. One safepin cannot
 * track (out of memory) could run work on registered memory that no marker
 * waits for: it is destroyed again and the create fails as the runtime
 * fails when it runs out of memory. */
static hipError_t track_stream(hipStream_t s, unsigned flags)
{
    int dev = 0;
    if (sp_real.hipGetDevice && sp_real.hipGetDevice(&dev) != hipSuccess)
        dev = 0;
    sp_lock();
    int rc = sp_streams_add(s, flags, dev);
    sp_unlock();
    if (rc == 0)
        return hipSuccess;
    sp_real.hipStreamDestroy(s);
    return hipErrorOutOfMemory;
}

hipError_t sp_stream_create(hipStream_t *s)
{
    sp_init();
    if (!SP_REAL_HIP(hipStreamCreate))
        return hipErrorNotInitialized;
    hipError_t e = sp_real.hipStreamCreate(s);
    if (e == hipSuccess && s)
        e = track_stream(*s, 0);
    return e;
}

hipError_t sp_stream_create_with_flags(hipStream_t *s, unsigned int flags)
{
    sp_init();
    if (!SP_REAL_HIP(hipStreamCreateWithFlags))
        return hipErrorNotInitialized;
    hipError_t e = sp_real.hipStreamCreateWithFlags(s, flags);
    if (e == hipSuccess && s)
        e = track_stream(*s, flags);
    return e;
}

hipError_t sp_stream_create_with_priority(hipStream_t *s, unsigned int flags, int priority)
{
    sp_init();
    if (!SP_REAL_HIP(hipStreamCreateWithPriority))
        return hipErrorNotInitialized;
    hipError_t e = sp_real.hipStreamCreateWithPriority(s, flags, priority);
    if (e == hipSuccess && s)
        e = track_stream(*s, flags);
    return e;
}

hipError_t sp_stream_destroy(hipStream_t s)
{
    sp_init();
    if (!SP_REAL_HIP(hipStreamDestroy))
        return hipErrorNotInitialized;
    if (sp_streams_destroy(s)) {
        /* From a host function: the reaper leaves the tail marker and
         * destroys the stream (no runtime call here). */
        sp_lock();
        sp_reaper_poke();
        sp_unlock();
        sp_reaper_kick();
        return hipSuccess;
    }
    return sp_real.hipStreamDestroy(s);
}

hipError_t sp_stream_begin_capture(hipStream_t s, hipStreamCaptureMode mode)
{
    sp_init();
    if (!SP_REAL_HIP(hipStreamBeginCapture))
        return hipErrorNotSupported;
    return sp_streams_begin_capture(s, mode);
}

hipError_t sp_stream_end_capture(hipStream_t s, hipGraph_t *graph)
{
    sp_init();
    if (!SP_REAL_HIP(hipStreamEndCapture))
        return hipErrorNotSupported;
    return sp_streams_end_capture(s, graph);
}

/* ---- copies and queries of ranges whose release is pending ---------------- */

/* The RELEASING range overlapping [p, p+n) that no LIVE range covers, or
 * NULL. Lock held. */
static sp_range *pending_overlap(const void *p, size_t n)
{
    if (!p)
        return NULL;
    sp_range *r = sp_reg_find_overlap((uintptr_t)p, n ? n : 1);
    return r && r->state == SP_RANGE_RELEASING ? r : NULL;
}

hipError_t sp_memcpy_async(void *dst, const void *src, size_t n, hipMemcpyKind kind,
                           hipStream_t stream)
{
    sp_init();
    if (!SP_REAL_HIP(hipMemcpyAsync))
        return hipErrorNotInitialized;
    if (sp_reg_empty() || n == 0)
        return sp_real.hipMemcpyAsync(dst, src, n, kind, stream);
    /* A side whose release is pending is pageable memory for the program:
     * the copy has completed when the call returns, as a pageable copy's
     * has, and the release waits for it (it is serialized with the real
     * unregister, so the runtime never sees the range vanish mid-copy). */
    sp_lock();
    sp_range *a = pending_overlap(dst, n), *b = pending_overlap(src, n);
    if (a && b && b->base < a->base) {
        sp_range *t = a;
        a = b;
        b = t;
    }
    if (a == b)
        b = NULL;
    uint64_t ta = a ? sp_reg_op_begin(a->base, a->size) : 0;
    uint64_t tb = b ? sp_reg_op_begin(b->base, b->size) : 0;
    int sync = (a || b) && !sp_tls_in_hostfn && !sp_streams_is_capturing(stream);
    sp_unlock();
    hipError_t e = sp_real.hipMemcpyAsync(dst, src, n, kind, stream);
    if (e == hipSuccess && sync) {
        int old = sp_relaxed_enter();
        sp_real.hipStreamSynchronize(stream);
        sp_relaxed_leave(old);
    }
    if (ta || tb) {
        sp_lock();
        if (tb)
            sp_reg_op_end(tb);
        if (ta)
            sp_reg_op_end(ta);
        sp_unlock();
    }
    return e;
}

/* The address to ask the runtime about for p: p itself, or, when p is in a
 * range whose release is pending (unregistered for the program), a byte
 * nobody ever registered, so the runtime answers as for such memory. */
static void *query_address(void *p)
{
    if (sp_reg_empty() || !p)
        return p;
    sp_lock();
    sp_range *r = settled_containing((uintptr_t)p);
    int pending = r && r->state == SP_RANGE_RELEASING;
    sp_unlock();
    return pending ? (void *)&probe_byte : p;
}

hipError_t sp_host_get_device_pointer(void **dev, void *p, unsigned int flags)
{
    sp_init();
    if (!SP_REAL_HIP(hipHostGetDevicePointer))
        return hipErrorNotInitialized;
    /* As attribute queries: an error answers whether p is registered. */
    if (dev && flags == 0)
        sp_api_probe();
    return sp_real.hipHostGetDevicePointer(dev, query_address(p), flags);
}

hipError_t sp_host_get_flags(unsigned int *flags, void *p)
{
    sp_init();
    if (!SP_REAL_HIP(hipHostGetFlags))
        return hipErrorNotInitialized;
    if (flags)
        sp_api_probe(); /* as above */
    return sp_real.hipHostGetFlags(flags, query_address(p));
}

/* ---- host functions -------------------------------------------------------- */

typedef struct trampoline {
    hipHostFn_t fn;
    hipStreamCallback_t cb;
    void *ud;
    int persistent; /* captured: runs on every graph replay, never freed */
} trampoline;

static void run_host_fn(void *arg)
{
    trampoline *t = arg;
    hipHostFn_t fn = t->fn;
    void *ud = t->ud;
    if (!t->persistent)
        sp_mem_free(t);
    sp_tls_in_hostfn++;
    fn(ud);
    sp_tls_in_hostfn--;
}

static void run_callback(hipStream_t s, hipError_t status, void *arg)
{
    trampoline *t = arg;
    hipStreamCallback_t cb = t->cb;
    void *ud = t->ud;
    if (!t->persistent)
        sp_mem_free(t);
    sp_tls_in_hostfn++;
    cb(s, status, ud);
    sp_tls_in_hostfn--;
}

static trampoline *make_trampoline(hipStream_t s)
{
    trampoline *t = sp_mem_calloc(1, sizeof(*t));
    if (t) {
        sp_lock();
        t->persistent = sp_streams_is_capturing(s);
        sp_unlock();
    }
    return t;
}

hipError_t sp_launch_host_func(hipStream_t s, hipHostFn_t fn, void *ud)
{
    sp_init();
    if (!SP_REAL_HIP(hipLaunchHostFunc))
        return hipErrorNotSupported;
    trampoline *t = fn ? make_trampoline(s) : NULL;
    if (!t)
        return sp_real.hipLaunchHostFunc(s, fn, ud);
    t->fn = fn;
    t->ud = ud;
    hipError_t e = sp_real.hipLaunchHostFunc(s, run_host_fn, t);
    if (e != hipSuccess)
        sp_mem_free(t);
    return e;
}

hipError_t sp_stream_add_callback(hipStream_t s, hipStreamCallback_t cb, void *ud,
                                  unsigned int flags)
{
    sp_init();
    if (!SP_REAL_HIP(hipStreamAddCallback))
        return hipErrorNotInitialized;
    trampoline *t = cb ? make_trampoline(s) : NULL;
    if (!t)
        return sp_real.hipStreamAddCallback(s, cb, ud, flags);
    t->cb = cb;
    t->ud = ud;
    hipError_t e = sp_real.hipStreamAddCallback(s, run_callback, t, flags);
    if (e != hipSuccess)
        sp_mem_free(t);
    return e;
}
