/*
 * init.c - initialization, devices, contexts, error names, and the driver
 * lock.
 *
 * Contexts: each device has one primary context (retained and released by
 * count); cuCtxCreate makes more. A context stands for its device: every
 * context of a device shares that device's streams and memory (simhip's
 * model has one null stream per device). The current context is per thread;
 * making one current makes its device simhip's current device.
 * Destroyed contexts are never freed (a stale handle reads a dead magic).
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "sc_internal.h"

hipError_t hipSetDevice(int deviceId);

static pthread_once_t boot_once = PTHREAD_ONCE_INIT;
static atomic_bool initialized;
static struct sc_ctx primaries[SH_MAX_DEVICES];
static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER; /* guards retains, was_reset */
/* A reset primary context is inactive until its next retain. */
static bool was_reset[SH_MAX_DEVICES];
static _Thread_local struct sc_ctx *tl_ctx;
/* The contexts below the current one (cuCtxCreate and cuCtxPushCurrent push,
 * cuCtxPopCurrent pops). */
#define SC_CTX_STACK 64
static _Thread_local struct sc_ctx *tl_stack[SC_CTX_STACK];
static _Thread_local int tl_depth;

static void boot(void)
{
    sh_init();
    sh_cfg.cuda = true;
    sh_cfg.personality = SH_CURRENT; /* CUDA's capture and unregister rules */
    for (int i = 0; i < SH_MAX_DEVICES; i++) {
        primaries[i].device = i;
        primaries[i].primary = true;
        primaries[i].magic = SC_CTX_MAGIC;
    }
}

static void sc_boot(void)
{
    pthread_once(&boot_once, boot);
}

bool sc_in_host_fn(void)
{
    return sh_tl_hostfn_stream != NULL;
}

static bool ctx_alive(const struct sc_ctx *c)
{
    return c && __atomic_load_n(&c->magic, __ATOMIC_ACQUIRE) == SC_CTX_MAGIC;
}

CUresult sc_enter(bool need_ctx)
{
    sc_boot();
    if (!atomic_load(&initialized))
        return CUDA_ERROR_NOT_INITIALIZED;
    /* The H200's driver refuses every call from a host function with 800,
     * cuCtxGetCurrent too (NVIDIA's runtime asks for it before each call,
     * so there even a runtime call that never reaches the driver's entry
     * point returns 800). */
    if (sc_in_host_fn())
        return CUDA_ERROR_NOT_PERMITTED;
    struct sc_ctx *c = tl_ctx;
    if (!ctx_alive(c))
        return need_ctx ? (c ? CUDA_ERROR_CONTEXT_IS_DESTROYED : CUDA_ERROR_INVALID_CONTEXT)
                        : CUDA_SUCCESS;
    hipSetDevice(c->device);
    sh_tl_owner = c;
    return CUDA_SUCCESS;
}

/* ---- the driver lock -------------------------------------------------- */
static pthread_mutex_t drv_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int drv_held, drv_waiting;

void sc_drv_hold(void)
{
    atomic_fetch_add(&drv_waiting, 1);
    pthread_mutex_lock(&drv_lock);
    atomic_fetch_sub(&drv_waiting, 1);
    atomic_store(&drv_held, 1);
}

void sc_drv_release(void)
{
    atomic_store(&drv_held, 0);
    pthread_mutex_unlock(&drv_lock);
}

/* Host functions pass: a host function the holder waits for must not wait
 * for the holder. */
void sc_drv_gate(void)
{
    if (sc_in_host_fn())
        return;
    atomic_fetch_add(&drv_waiting, 1);
    pthread_mutex_lock(&drv_lock);
    atomic_fetch_sub(&drv_waiting, 1);
    pthread_mutex_unlock(&drv_lock);
}

/* Test hook (simcuda.h): is the driver lock held, and how many calls wait
 * for it. */
void simcuda_driver_lock_state(int *held, int *waiting);
void simcuda_driver_lock_state(int *held, int *waiting)
{
    if (held)
        *held = atomic_load(&drv_held);
    if (waiting)
        *waiting = atomic_load(&drv_waiting);
}

/* ---- initialization and devices ------------------------------------------ */

CUresult cuInit(unsigned int Flags)
{
    sc_boot();
    if (Flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    atomic_store(&initialized, true);
    return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int *driverVersion)
{
    if (!driverVersion)
        return CUDA_ERROR_INVALID_VALUE;
    *driverVersion = 13000;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *count)
{
    CUresult e = sc_enter(false);
    if (e != CUDA_SUCCESS)
        return e;
    if (!count)
        return CUDA_ERROR_INVALID_VALUE;
    *count = sh_cfg.ndevices;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
    CUresult e = sc_enter(false);
    if (e != CUDA_SUCCESS)
        return e;
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    if (ordinal < 0 || ordinal >= sh_cfg.ndevices)
        return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}

/* ---- contexts ----------------------------------------------------------- */

static CUresult check_device(CUdevice dev)
{
    return dev < 0 || dev >= sh_cfg.ndevices ? CUDA_ERROR_INVALID_DEVICE : CUDA_SUCCESS;
}

static void make_current(struct sc_ctx *c)
{
    tl_ctx = c;
    if (c) {
        hipSetDevice(c->device);
        sh_tl_owner = c;
    }
}

/* Wait for every stream of the context's device. */
static void ctx_sync(const struct sc_ctx *c, const char *api)
{
    sh_sync(SYNC_DEVICE, NULL, c->device, api);
}

static CUresult ctx_create(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    CUresult e = sc_enter(false);
    if (e != CUDA_SUCCESS)
        return e;
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if ((e = check_device(dev)) != CUDA_SUCCESS)
        return e;
    struct sc_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return CUDA_ERROR_OUT_OF_MEMORY;
    c->device = dev;
    c->flags = flags;
    c->magic = SC_CTX_MAGIC;
    if (tl_depth < SC_CTX_STACK) /* pushed, as the driver does */
        tl_stack[tl_depth++] = tl_ctx;
    make_current(c);
    *pctx = (CUcontext)c;
    return CUDA_SUCCESS;
}

CUresult cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    return ctx_create(pctx, flags, dev);
}

CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    return ctx_create(pctx, flags, dev);
}

/* Waits for the context's work; the handle is dead afterwards. */
static CUresult ctx_destroy(CUcontext ctx)
{
    CUresult e = sc_enter(false);
    if (e != CUDA_SUCCESS)
        return e;
    struct sc_ctx *c = (struct sc_ctx *)ctx;
    if (!ctx_alive(c) || c->primary)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (sc_in_host_fn())
        return CUDA_ERROR_NOT_PERMITTED;
    ctx_sync(c, "cuCtxDestroy");
    __atomic_store_n(&c->magic, 0, __ATOMIC_RELEASE);
    if (tl_ctx == c)
        tl_ctx = NULL;
    return CUDA_SUCCESS;
}

CUresult cuCtxDestroy(CUcontext ctx)
{
    return ctx_destroy(ctx);
}

CUresult cuCtxDestroy_v2(CUcontext ctx)
{
    return ctx_destroy(ctx);
}

CUresult cuCtxGetCurrent(CUcontext *pctx)
{
    CUresult e = sc_enter(false);
    if (e != CUDA_SUCCESS)
        return e;
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    *pctx = ctx_alive(tl_ctx) ? (CUcontext)tl_ctx : NULL;
    return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext ctx)
{
    CUresult e = sc_enter(false);
    if (e != CUDA_SUCCESS)
        return e;
    struct sc_ctx *c = (struct sc_ctx *)ctx;
    if (c && !ctx_alive(c))
        return CUDA_ERROR_INVALID_CONTEXT;
    make_current(c);
    return CUDA_SUCCESS;
}

/* The API version of a live context (NULL: the current one): 3020, what
 * the driver answers for contexts made since CUDA 3.2. */
CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int *version)
{
    CUresult e = sc_enter(false);
    if (e != CUDA_SUCCESS)
        return e;
    struct sc_ctx *c = ctx ? (struct sc_ctx *)ctx : tl_ctx;
    if (!ctx_alive(c))
        return ctx ? CUDA_ERROR_INVALID_CONTEXT : CUDA_ERROR_INVALID_CONTEXT;
    if (!version)
        return CUDA_ERROR_INVALID_VALUE;
    *version = 3020;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice *device)
{
    CUresult e = sc_enter(true);
    if (e != CUDA_SUCCESS)
        return e;
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    *device = tl_ctx->device;
    return CUDA_SUCCESS;
}

/* CUDA 13: the device of ctx, NULL the current context's. */
CUresult cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx)
{
    if (!ctx)
        return cuCtxGetDevice(device);
    CUresult e = sc_enter(false);
    if (e != CUDA_SUCCESS)
        return e;
    struct sc_ctx *c = (struct sc_ctx *)ctx;
    if (!ctx_alive(c))
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    *device = c->device;
    return CUDA_SUCCESS;
}

/* Waits for every stream of the current context's device. Does not take
 * the driver lock (a background cuCtxSynchronize stalls no other thread). */
CUresult cuCtxSynchronize(void)
{
    CUresult e = sc_enter(true);
    if (e != CUDA_SUCCESS)
        return e;
    if (sc_in_host_fn())
        return CUDA_ERROR_NOT_PERMITTED;
    ctx_sync(tl_ctx, "cuCtxSynchronize");
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    CUresult e = sc_enter(false);
    if (e != CUDA_SUCCESS)
        return e;
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if ((e = check_device(dev)) != CUDA_SUCCESS)
        return e;
    pthread_mutex_lock(&ctx_lock);
    primaries[dev].retains++;
    was_reset[dev] = false;
    pthread_mutex_unlock(&ctx_lock);
    *pctx = (CUcontext)&primaries[dev];
    return CUDA_SUCCESS;
}

/* Active: retained and not released to zero, nor reset since (as the
 * driver answers; a retain of an inactive one would create it). Flags: as
 * cuDevicePrimaryCtxSetFlags set them. */
CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
    CUresult e = sc_enter(false);
    if (e != CUDA_SUCCESS)
        return e;
    if ((e = check_device(dev)) != CUDA_SUCCESS)
        return e;
    if (!flags || !active)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&ctx_lock);
    *active = primaries[dev].retains > 0 && !was_reset[dev];
    *flags = primaries[dev].flags;
    pthread_mutex_unlock(&ctx_lock);
    return CUDA_SUCCESS;
}

/* The last release resets: the device's work is waited for. */
static CUresult primary_release(CUdevice dev)
{
    CUresult e = sc_enter(false);
    if (e != CUDA_SUCCESS)
        return e;
    if ((e = check_device(dev)) != CUDA_SUCCESS)
        return e;
    pthread_mutex_lock(&ctx_lock);
    int left = primaries[dev].retains > 0 ? --primaries[dev].retains : -1;
    pthread_mutex_unlock(&ctx_lock);
    if (left < 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (left == 0)
        ctx_sync(&primaries[dev], "cuDevicePrimaryCtxRelease");
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease(CUdevice dev)
{
    return primary_release(dev);
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    return primary_release(dev);
}

/* Waits for the device's work. (simcuda keeps allocations and
 * registrations across a reset; the real driver frees them.) */
static CUresult primary_reset(CUdevice dev)
{
    CUresult e = sc_enter(false);
    if (e != CUDA_SUCCESS)
        return e;
    if ((e = check_device(dev)) != CUDA_SUCCESS)
        return e;
    if (sc_in_host_fn())
        return CUDA_ERROR_NOT_PERMITTED;
    ctx_sync(&primaries[dev], "cuDevicePrimaryCtxReset");
    pthread_mutex_lock(&ctx_lock);
    was_reset[dev] = true;
    pthread_mutex_unlock(&ctx_lock);
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxReset(CUdevice dev)
{
    return primary_reset(dev);
}

CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
    return primary_reset(dev);
}

/* ---- error names ------------------------------------------------------- */

#define SC_ERRORS(X)                                                                  \
    X(CUDA_SUCCESS, "no error")                                                       \
    X(CUDA_ERROR_INVALID_VALUE, "invalid argument")                                   \
    X(CUDA_ERROR_OUT_OF_MEMORY, "out of memory")                                      \
    X(CUDA_ERROR_NOT_INITIALIZED, "initialization error")                             \
    X(CUDA_ERROR_DEINITIALIZED, "driver shutting down")                               \
    X(CUDA_ERROR_STUB_LIBRARY, "CUDA driver is a stub library")                       \
    X(CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected")                     \
    X(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal")                            \
    X(CUDA_ERROR_INVALID_CONTEXT, "invalid device context")                           \
    X(CUDA_ERROR_INVALID_HANDLE, "invalid resource handle")                           \
    X(CUDA_ERROR_ILLEGAL_STATE, "the operation cannot be performed in the present state") \
    X(CUDA_ERROR_NOT_FOUND, "named symbol not found")                                 \
    X(CUDA_ERROR_NOT_READY, "device not ready")                                       \
    X(CUDA_ERROR_ILLEGAL_ADDRESS, "an illegal memory access was encountered")         \
    X(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE, "primary context active")                    \
    X(CUDA_ERROR_CONTEXT_IS_DESTROYED, "context is destroyed")                        \
    X(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED,                                      \
      "part or all of the requested memory range is already mapped")                  \
    X(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED,                                          \
      "pointer does not correspond to a registered memory region")                    \
    X(CUDA_ERROR_NOT_PERMITTED, "operation not permitted")                            \
    X(CUDA_ERROR_NOT_SUPPORTED, "operation not supported")                            \
    X(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "operation not permitted when stream is capturing") \
    X(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,                                          \
      "operation failed due to a previous error during capture")                      \
    X(CUDA_ERROR_STREAM_CAPTURE_MERGE,                                                \
      "operation would result in a merge of separate capture sequences")              \
    X(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, "capture was not ended in the same stream as it began") \
    X(CUDA_ERROR_STREAM_CAPTURE_UNJOINED, "capturing stream has unjoined work")       \
    X(CUDA_ERROR_STREAM_CAPTURE_ISOLATION, "dependency created on uncaptured work in another stream") \
    X(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT,                                             \
      "operation would make the legacy stream depend on a capturing blocking stream") \
    X(CUDA_ERROR_CAPTURED_EVENT,                                                      \
      "operation not permitted on an event last recorded in a capturing stream")      \
    X(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD,                                         \
      "attempt to terminate a thread-local capture sequence from another thread")     \
    X(CUDA_ERROR_UNKNOWN, "unknown error")

CUresult cuGetErrorName(CUresult error, const char **pStr)
{
    if (!pStr)
        return CUDA_ERROR_INVALID_VALUE;
    switch (error) {
#define X(name, str) case name: *pStr = #name; return CUDA_SUCCESS;
        SC_ERRORS(X)
#undef X
    default:
        *pStr = NULL;
        return CUDA_ERROR_INVALID_VALUE;
    }
}

CUresult cuGetErrorString(CUresult error, const char **pStr)
{
    if (!pStr)
        return CUDA_ERROR_INVALID_VALUE;
    switch (error) {
#define X(name, str) case name: *pStr = str; return CUDA_SUCCESS;
        SC_ERRORS(X)
#undef X
    default:
        *pStr = NULL;
        return CUDA_ERROR_INVALID_VALUE;
    }
}

/* ---- the context stack (cuCtxPushCurrent / cuCtxPopCurrent) ----------------
 * Per thread: the current context is its top; pushing makes ctx current,
 * popping restores the one below. */

CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
    CUresult e = sc_enter(false);
    if (e != CUDA_SUCCESS)
        return e;
    struct sc_ctx *c = (struct sc_ctx *)ctx;
    if (!ctx_alive(c))
        return CUDA_ERROR_INVALID_CONTEXT;
    if (tl_depth == SC_CTX_STACK)
        return CUDA_ERROR_OUT_OF_MEMORY;
    tl_stack[tl_depth++] = tl_ctx;
    make_current(c);
    return CUDA_SUCCESS;
}

CUresult cuCtxPopCurrent_v2(CUcontext *pctx)
{
    CUresult e = sc_enter(false);
    if (e != CUDA_SUCCESS)
        return e;
    if (!ctx_alive(tl_ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    if (pctx)
        *pctx = (CUcontext)tl_ctx;
    struct sc_ctx *below = tl_depth > 0 ? tl_stack[--tl_depth] : NULL;
    tl_ctx = NULL;
    if (ctx_alive(below))
        make_current(below);
    return CUDA_SUCCESS;
}

/* CUDA 13's cuCtxCreate: the parameters (execution affinity, CIG) are not
 * modelled; NULL is the plain context. */
CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *params, unsigned int flags,
                        CUdevice dev)
{
    if (params)
        return CUDA_ERROR_NOT_SUPPORTED;
    return ctx_create(pctx, flags, dev);
}

CUresult cuCtxGetFlags(unsigned int *flags)
{
    CUresult e = sc_enter(true);
    if (e != CUDA_SUCCESS)
        return e;
    if (!flags)
        return CUDA_ERROR_INVALID_VALUE;
    *flags = tl_ctx->flags;
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags)
{
    CUresult e = sc_enter(false);
    if (e != CUDA_SUCCESS)
        return e;
    if ((e = check_device(dev)) != CUDA_SUCCESS)
        return e;
    if (flags & ~0x1fu)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&ctx_lock);
    primaries[dev].flags = flags;
    pthread_mutex_unlock(&ctx_lock);
    return CUDA_SUCCESS;
}
