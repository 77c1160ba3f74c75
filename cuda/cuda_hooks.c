/*
 * cuda_hooks.c - the CUDA face's memory hooks: register, unregister,
 * cuMemFree_v2, pointer attributes and queries, copies of ranges whose
 * release is pending. The same guarantees as the HIP hooks (DESIGN
 * section 2), with CUDA's codes (DESIGN section 3, measured on the H200):
 * NULL, size 0, an interior pointer and cuMemFree_v2 of a registered host
 * pointer: CUDA_ERROR_INVALID_VALUE; a refused overlap: 712; unknown,
 * stack or released pointers: 713. An identical re-register nests (the
 * driver's 712 there is the hazard).
 */
#include "cuda_hooks.h"
#include "cuda_real.h"
#include "api_error.h"
#include "diag.h"
#include "interpose.h"
#include "options.h"
#include "reaper.h"
#include "registry.h"
#include "lock.h"
#include "maps.h"
#include "runtime.h"
#include "streams.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

extern __thread int sp_tls_in_hostfn __attribute__((tls_model("initial-exec")));

/* Never registered by anyone: what the driver says of unregistered memory. */
static char probe_byte;

static sp_CUdeviceptr dptr(const void *p) { return (sp_CUdeviceptr)(uintptr_t)p; }

/* 1 if the driver already knows p (cuMemHostAlloc, or registered where
 * safepin did not see it). No call from a host function. */
static int driver_knows(const void *p)
{
    if (sp_tls_in_hostfn || !sp_cu.cuPointerGetAttribute)
        return 0;
    unsigned type = 0;
    int old = sp_relaxed_enter();
    int e = sp_cu.cuPointerGetAttribute(&type, SP_CU_POINTER_ATTRIBUTE_MEMORY_TYPE, dptr(p));
    sp_relaxed_leave(old);
    return e == SP_CUDA_SUCCESS && type != 0;
}

/* The range containing p once no register of it is in flight. Lock held. */
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

/* At the first registration the runtime above the driver (a static cudart)
 * has registered its exit handler, which destroys the context: an atexit
 * handler registered now runs before it, so the exit drain releases while
 * the driver still works (the H200 answered CUDA_ERROR_DEINITIALIZED to
 * releases drained after it). */
static void add_exit_drain(void) { atexit(sp_exit_drain_early); }

static void drain_before_runtime_exit(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, add_exit_drain);
}

/* Lock held. An identical live range nests; RELEASING: revived or waited
 * for. Returns 1 with *ret set when the call is answered, 0 to register,
 * 2 when the memory overlaps another runtime's range (HIP on another
 * device): two drivers each pin it, as bare, so the call passes through;
 * 3 when it overlaps another live range: the driver refuses that itself,
 * with the code its pages call for (712, or 1 or 2 for memory it cannot
 * pin at all), so it answers (see refused_by_driver). */
static int settle_overlap(uintptr_t base, size_t size, unsigned flags, const char *name,
                          sp_site **site, sp_CUresult *ret)
{
    for (;;) {
        sp_range *r = sp_reg_find_overlap(base, size);
        if (!r)
            return 0;
        if (r->registering) {
            sp_lock_wait();
            continue;
        }
        if (r->rt != SP_RT_CUDA)
            return 2; /* another runtime's registration: its driver, not CUDA's */
        int same = r->base == base && r->size == size && r->flags == flags;
        if (r->state == SP_RANGE_LIVE) {
            if (same) {
                r->nest++;
                SP_COUNT(nested);
                sp_history_add(SP_EV_NEST, base, size, *site);
                sp_diag(SP_NESTED_REGISTER, r,
                        "%s(%p, %zu, 0x%x)%s: nested (count %d); the bare driver answers 712 here",
                        name, (void *)base, size, flags, sp_cu_entry("cudaHostRegister"), r->nest);
                *ret = SP_CUDA_SUCCESS;
                return 1;
            }
            return 3; /* the driver refuses overlaps itself: its answer comes first (G10) */
        }
        /* Revived unless its pages can no longer be pinned (mprotect is not
         * watched): then the driver answers once the release is done. */
        if (sp_opt.revive && same && sp_maps_pinnable(base, size, flags & SP_REGISTER_READ_ONLY) &&
            sp_reaper_revive(r)) {
            SP_COUNT(revived);
            sp_site_free(sp_sites(r)->reg);
            sp_site_free(sp_sites(r)->unreg);
            sp_sites(r)->reg = *site;
            sp_sites(r)->unreg = NULL;
            *site = NULL;
            sp_history_add(SP_EV_REVIVE, base, size, sp_sites(r)->reg);
            *ret = SP_CUDA_SUCCESS;
            return 1;
        }
        if (sp_tls_in_hostfn) {
            sp_diag(SP_OVERLAPPING_REGISTER, r,
                    "%s(%p, %zu) from a host function overlaps 0x%lx, whose release is pending: "
                    "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED",
                    name, (void *)base, size, (unsigned long)r->base);
            *ret = SP_CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
            return 1;
        }
        SP_COUNT(waits_for_release);
        sp_reaper_wait_range(r->base, r->id);
    }
}

/* A register that overlaps a live range, answered by the driver (serialized
 * with that range's own calls, G5); 712 is the overlap refusal safepin
 * reports. Lock NOT held. */
static sp_CUresult refused_by_driver(sp_cu_register_fn real, const char *name, void *p,
                                     size_t size, unsigned int flags, sp_site *site)
{
    uintptr_t base = (uintptr_t)p;
    uint64_t tok = sp_reg_op_enter(base, size);
    sp_CUresult e = real(p, size, flags);
    sp_lock();
    sp_reg_op_end(tok);
    sp_range *r = sp_reg_find_overlap(base, size);
    if (e == SP_CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED) {
        SP_COUNT(overlapping_refused);
        sp_history_add(SP_EV_REFUSED, base, size, site);
        sp_diag(SP_OVERLAPPING_REGISTER, r,
                "%s(%p, %zu, 0x%x)%s overlaps the live registration 0x%lx (%zu bytes, flags "
                "0x%x): CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED",
                name, p, size, flags, sp_cu_entry("cudaHostRegister"),
                (unsigned long)(r ? r->base : 0), r ? r->size : 0, r ? r->flags : 0);
    } else {
        sp_log(SP_LOG_INFO, "info",
               "%s(%p, %zu, 0x%x) overlaps a live registration; the driver's answer, %d, "
               "passed through%s", name, p, size, flags, e,
               e == SP_CUDA_SUCCESS ? " (not tracked)" : "");
    }
    sp_unlock();
    sp_site_free(site);
    return e;
}

sp_CUresult sp_cu_host_register(sp_cu_register_fn real, const char *name, void *p, size_t size,
                                unsigned int flags)
{
    sp_cu_enter();
    SP_TRACE("%s(%p, %zu, 0x%x)%s", name, p, size, flags, sp_cu_entry("cudaHostRegister"));
    if (!real)
        return SP_CUDA_ERROR_NOT_INITIALIZED;
    if (!p || size == 0) {
        sp_diag(SP_INVALID_ARGUMENT, NULL, "%s(%p, %zu, 0x%x)%s: %s", name, p, size, flags,
                sp_cu_entry("cudaHostRegister"), p ? "size 0" : "NULL pointer");
        return SP_CUDA_ERROR_INVALID_VALUE;
    }
    uintptr_t base = (uintptr_t)p;
    if (size > UINTPTR_MAX - base) {
        sp_diag(SP_INVALID_ARGUMENT, NULL, "%s(%p, %zu, 0x%x): the range wraps around", name, p,
                size, flags);
        return SP_CUDA_ERROR_INVALID_VALUE;
    }
    if (sp_reg_inherited(base, size)) {
        /* A forked child, on memory its parent had registered: the driver's
         * state there is unknown, so the call goes to it as it is (G9). */
        sp_log(SP_LOG_INFO, "info",
               "%s(%p, %zu): memory registered by the parent process before fork; passed "
               "through, not tracked", name, p, size);
        return real(p, size, flags);
    }
    sp_CUcontext ctx = NULL;
    sp_CUdevice dev = 0;
    if (!sp_tls_in_hostfn) {
        ctx = sp_cu_current_ctx();
        if (!sp_cu.cuCtxGetDevice || sp_cu.cuCtxGetDevice(&dev) != SP_CUDA_SUCCESS)
            dev = 0;
    }
    sp_site *site = sp_site_capture_entry();
    sp_CUresult ret;

    sp_lock();
    int settled = settle_overlap(base, size, flags, name, &site, &ret);
    if (settled == 3) {
        sp_unlock();
        return refused_by_driver(real, name, p, size, flags, site);
    }
    if (settled) {
        sp_unlock();
        sp_site_free(site);
        if (settled == 1)
            return ret;
        sp_log(SP_LOG_INFO, "info",
               "%s(%p, %zu): memory another runtime registered; passed through, not tracked", name,
               p, size);
        return real(p, size, flags);
    }
    sp_range *r = sp_reg_insert(base, size, flags, dev);
    if (!r) {
        sp_unlock();
        sp_site_free(site);
        sp_log(SP_LOG_ERROR, "runtime-error",
               "out of memory in the registry: %p (%zu bytes) registered without safepin's guarantees",
               p, size);
        return real(p, size, flags);
    }
    r->rt = SP_RT_CUDA;
    r->place = ctx;
    r->registering = 1;
    sp_sites(r)->reg = site;
    if (ctx)
        sp_streams_add_place(SP_RT_CUDA, ctx);
    uint64_t tok = sp_reg_op_begin(base, size);
    sp_unlock();

    int foreign = driver_knows(p);
    sp_CUresult e = real(p, size, flags);

    sp_lock();
    sp_reg_op_end(tok);
    if (foreign || e != SP_CUDA_SUCCESS) {
        if (foreign)
            sp_log(SP_LOG_INFO, "info",
                   "%s(%p, %zu): the driver already knows this memory (cuMemHostAlloc or a "
                   "registration made elsewhere); passed through, not tracked: returned %d",
                   name, p, size, e);
        sp_site_free(sp_sites(r)->reg);
        sp_sites(r)->reg = NULL;
        sp_reg_remove(r);
    } else {
        r->registering = 0;
        SP_COUNT(registrations);
        sp_history_add(SP_EV_REGISTER, base, size, site);
    }
    sp_lock_broadcast();
    sp_unlock();
    if (e == SP_CUDA_SUCCESS && !foreign)
        drain_before_runtime_exit();
    return e;
}

/* ---- unregister ---------------------------------------------------------- */

/* Not ours: the driver answers (it may hold registrations safepin never
 * saw). Lock held on entry, released on return. */
static sp_CUresult unregister_unknown(void *p, sp_site *site)
{
    uintptr_t base = (uintptr_t)p;
    int dbl = sp_reaper_recently_released(base);
    uint64_t tok = sp_reg_op_begin(base, 1);
    sp_unlock();
    sp_CUresult e = SP_CU_REAL(cuMemHostUnregister) ? sp_cu.cuMemHostUnregister(p)
                                                    : SP_CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    sp_lock();
    sp_reg_op_end(tok);
    if (e == SP_CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED) {
        if (dbl)
            sp_diag(SP_DOUBLE_UNREGISTER, NULL,
                    "cuMemHostUnregister(%p)%s: already unregistered (and released)", p, sp_cu_entry("cudaHostUnregister"));
        else
            sp_diag(SP_UNREGISTER_UNKNOWN, NULL, "cuMemHostUnregister(%p)%s: not a registered pointer",
                    p, sp_cu_entry("cudaHostUnregister"));
    }
    sp_unlock();
    sp_site_free(site);
    return e;
}

sp_CUresult sp_cu_host_unregister(void *p)
{
    sp_cu_enter();
    SP_TRACE("cuMemHostUnregister(%p)%s%s", p, sp_cu_entry("cudaHostUnregister"),
             sp_tls_in_hostfn ? " in a host function" : "");
    if (!p) {
        sp_diag(SP_INVALID_ARGUMENT, NULL, "cuMemHostUnregister(NULL)%s", sp_cu_entry("cudaHostUnregister"));
        return SP_CUDA_ERROR_INVALID_VALUE;
    }
    uintptr_t base = (uintptr_t)p;
    sp_site *site = sp_site_capture_entry();

    sp_lock();
    sp_range *r = settled_containing(base);
    if (!r || r->rt != SP_RT_CUDA)
        return unregister_unknown(p, site);
    if (r->base != base) {
        sp_diag(SP_UNREGISTER_INTERIOR, r,
                "cuMemHostUnregister(%p)%s: %zu bytes inside the range 0x%lx (%zu bytes); "
                "CUDA_ERROR_INVALID_VALUE, the range stays %s",
                p, sp_cu_entry("cudaHostUnregister"), (size_t)(base - r->base), (unsigned long)r->base, r->size,
                r->state == SP_RANGE_LIVE ? "registered" : "pending release");
        sp_unlock();
        sp_site_free(site);
        return SP_CUDA_ERROR_INVALID_VALUE;
    }
    if (r->state == SP_RANGE_RELEASING) {
        sp_diag(SP_DOUBLE_UNREGISTER, r, "cuMemHostUnregister(%p)%s: already unregistered", p,
                sp_cu_entry("cudaHostUnregister"));
        sp_unlock();
        sp_site_free(site);
        return SP_CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    }
    if (--r->nest > 0) {
        sp_history_add(SP_EV_UNREGISTER, base, r->size, site);
        sp_unlock();
        sp_site_free(site);
        return SP_CUDA_SUCCESS;
    }
    sp_site_free(sp_sites(r)->unreg);
    sp_sites(r)->unreg = site;
    r->t_unregister_ns = sp_now_ns();
    sp_history_add(SP_EV_UNREGISTER, base, r->size, site);
    uint64_t id = r->id;
    sp_reaper_release(r);
    int mode = sp_opt.unreg_mode;
    if (sp_tls_in_hostfn)
        mode = SP_UNREG_ASYNC; /* the driver answers 800 here; safepin defers instead (G8) */
    if (mode == SP_UNREG_SYNC && sp_streams_thread_captures())
        mode = SP_UNREG_ORDERED;
    if (mode == SP_UNREG_SYNC)
        sp_reaper_wait_range(base, id);
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
    return SP_CUDA_SUCCESS;
}

/* ---- cuMemFree_v2 -------------------------------------------------------- */

sp_CUresult sp_cu_mem_free(sp_CUdeviceptr d)
{
    sp_cu_enter();
    if (!SP_CU_REAL(cuMemFree_v2))
        return SP_CUDA_ERROR_NOT_INITIALIZED;
    void *p = (void *)(uintptr_t)d;
    if (!p || sp_reg_empty())
        return sp_cu.cuMemFree_v2(d);
    sp_lock();
    sp_range *r = settled_containing((uintptr_t)p);
    if (r && r->state == SP_RANGE_LIVE) {
        sp_diag(SP_HIPFREE_HOST_POINTER, r,
                "cuMemFree_v2(%p)%s of host memory inside the registered range 0x%lx (%zu bytes): "
                "CUDA_ERROR_INVALID_VALUE, registration untouched",
                p, sp_cu_entry("cudaFree"), (unsigned long)r->base, r->size);
        sp_unlock();
        return SP_CUDA_ERROR_INVALID_VALUE;
    }
    if (r) {
        /* Unregistered for the program: the answer for host memory never
         * registered, whether or not the release completed. */
        sp_unlock();
        return sp_tls_in_hostfn ? SP_CUDA_ERROR_NOT_PERMITTED : sp_cu.cuMemFree_v2(dptr(&probe_byte));
    }
    uint64_t tok = sp_reg_op_begin((uintptr_t)p, 1);
    sp_unlock();
    sp_CUresult e = sp_cu.cuMemFree_v2(d);
    sp_lock();
    sp_reg_op_end(tok);
    sp_unlock();
    return e;
}

/* ---- attributes and queries ------------------------------------------------ */

/* The address to ask the driver about for p: p, or, inside a range whose
 * release is pending (unregistered for the program), a byte nobody ever
 * registered, so the driver answers as for such memory. */
static void *query_address(const void *p)
{
    if (sp_reg_empty() || !p)
        return (void *)p;
    sp_lock();
    sp_range *r = settled_containing((uintptr_t)p);
    int pending = r && r->state == SP_RANGE_RELEASING;
    sp_unlock();
    return pending ? (void *)&probe_byte : (void *)p;
}

sp_CUresult sp_cu_pointer_get_attribute(void *data, int attr, sp_CUdeviceptr ptr)
{
    sp_cu_enter();
    if (!SP_CU_REAL(cuPointerGetAttribute))
        return SP_CUDA_ERROR_NOT_INITIALIZED;
    /* With somewhere to answer, an error says the driver does not know ptr
     * (or the attribute): programs ask that of any pointer, not an api-error. */
    if (data)
        sp_api_probe();
    void *q = query_address((void *)(uintptr_t)ptr);
    sp_CUresult e = sp_cu.cuPointerGetAttribute(data, attr, dptr(q));
    if (q == (void *)&probe_byte && e == SP_CUDA_SUCCESS && data &&
        attr == SP_CU_POINTER_ATTRIBUTE_HOST_POINTER && *(void **)data == q)
        *(void **)data = (void *)(uintptr_t)ptr;
    return e;
}

sp_CUresult sp_cu_pointer_get_attributes(unsigned int n, int *attrs, void **data, sp_CUdeviceptr ptr)
{
    sp_cu_enter();
    if (!SP_CU_REAL(cuPointerGetAttributes))
        return SP_CUDA_ERROR_NOT_INITIALIZED;
    if (n && attrs && data)
        sp_api_probe(); /* as above */
    void *q = query_address((void *)(uintptr_t)ptr);
    sp_CUresult e = sp_cu.cuPointerGetAttributes(n, attrs, data, dptr(q));
    if (q == (void *)&probe_byte && e == SP_CUDA_SUCCESS && attrs && data)
        for (unsigned i = 0; i < n; i++)
            if (attrs[i] == SP_CU_POINTER_ATTRIBUTE_HOST_POINTER && data[i] &&
                *(void **)data[i] == q)
                *(void **)data[i] = (void *)(uintptr_t)ptr;
    return e;
}

sp_CUresult sp_cu_host_get_device_pointer(sp_CUdeviceptr *d, void *p, unsigned int flags)
{
    sp_cu_enter();
    if (!SP_CU_REAL(cuMemHostGetDevicePointer_v2))
        return SP_CUDA_ERROR_NOT_INITIALIZED;
    /* As attribute queries: an error answers whether p is registered. */
    if (d && flags == 0)
        sp_api_probe();
    return sp_cu.cuMemHostGetDevicePointer_v2(d, query_address(p), flags);
}

sp_CUresult sp_cu_host_get_flags(unsigned int *flags, void *p)
{
    sp_cu_enter();
    if (!SP_CU_REAL(cuMemHostGetFlags))
        return SP_CUDA_ERROR_NOT_INITIALIZED;
    if (flags)
        sp_api_probe(); /* as above */
    return sp_cu.cuMemHostGetFlags(flags, query_address(p));
}

/* ---- copies of host ranges whose release is pending --------------------- */

/* A host side whose release is pending is pageable memory for the program:
 * the copy has completed when the call returns, and it is serialized with
 * the real unregister. Lock NOT held. Returns the op token (0: none). */
static uint64_t pending_begin(const void *host, size_t n, sp_CUstream s, int *sync)
{
    *sync = 0;
    if (sp_reg_empty() || !host || n == 0)
        return 0;
    sp_lock();
    sp_range *r = sp_reg_find_overlap((uintptr_t)host, n);
    uint64_t tok = 0;
    if (r && r->state == SP_RANGE_RELEASING) {
        tok = sp_reg_op_begin(r->base, r->size);
        *sync = !sp_tls_in_hostfn && !sp_streams_is_capturing_rt(SP_RT_CUDA, s);
    }
    sp_unlock();
    return tok;
}

static void pending_end(uint64_t tok, sp_CUresult e, int sync, sp_CUstream s)
{
    if (e == SP_CUDA_SUCCESS && sync && sp_cu.cuStreamSynchronize) {
        int old = sp_relaxed_enter();
        sp_cu.cuStreamSynchronize(s);
        sp_relaxed_leave(old);
    }
    if (tok) {
        sp_lock();
        sp_reg_op_end(tok);
        sp_unlock();
    }
}

sp_CUresult sp_cu_memcpy_htod(sp_cu_htod_fn real, sp_CUdeviceptr dst, const void *src, size_t n,
                              sp_CUstream s)
{
    if (!real)
        return SP_CUDA_ERROR_NOT_INITIALIZED;
    int sync;
    uint64_t tok = pending_begin(src, n, s, &sync);
    sp_CUresult e = real(dst, src, n, s);
    pending_end(tok, e, sync, s);
    return e;
}

sp_CUresult sp_cu_memcpy_dtoh(sp_cu_dtoh_fn real, void *dst, sp_CUdeviceptr src, size_t n,
                              sp_CUstream s)
{
    if (!real)
        return SP_CUDA_ERROR_NOT_INITIALIZED;
    int sync;
    uint64_t tok = pending_begin(dst, n, s, &sync);
    sp_CUresult e = real(dst, src, n, s);
    pending_end(tok, e, sync, s);
    return e;
}
