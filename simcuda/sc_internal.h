/*
 * sc_internal.h - what simcuda's files share. simcuda is the CUDA driver
 * face of simhip's device model: its cu* entry points are a thin layer over
 * simhip's code (linked into the same library, where the hip* names are
 * local: an LD_PRELOADed interposer sees only the program's cu* calls).
 *
 * Locks: sc_drv_lock (the driver lock below) is taken before any of
 * simhip's locks, never while holding one.
 */
#ifndef SIMCUDA_SC_INTERNAL_H
#define SIMCUDA_SC_INTERNAL_H

#include "../simhip/internal.h"
#include "cuda_min.h"

/* hip* results share CUDA's values (hipErrorInvalidValue 1, ..., 712, 713,
 * 900, 901); the conversion is a cast. */
static inline CUresult sc_res(hipError_t e)
{
    return (CUresult)e;
}

/* ---- init.c: initialization, devices, contexts ------------------------ */
struct sc_ctx {
    unsigned magic;   /* SC_CTX_MAGIC while alive */
    int device;
    bool primary;
    int retains;      /* primary: cuDevicePrimaryCtxRetain count */
    unsigned flags;   /* scheduling flags (cuDevicePrimaryCtxSetFlags, cuCtxCreate) */
};
#define SC_CTX_MAGIC 0x5c0c7c7u

/* Entry check of every call that needs the driver: cuInit was called (else
 * 3), and with need_ctx a live current context (else 201), whose device
 * becomes simhip's current device for this call. */
CUresult sc_enter(bool need_ctx);
/* Calls made from a host function that the driver refuses (800). */
bool sc_in_host_fn(void);

/* The driver lock. cuMemHostUnregister, cuMemFree_v2 and cuMemFreeHost hold
 * it while they wait for the device; calls that enqueue work or register
 * pass through it first, so another thread's launch stalls meanwhile
 * (cuCtxSynchronize and the other waits do not take it). */
void sc_drv_hold(void);
void sc_drv_release(void);
void sc_drv_gate(void);

/* ---- stream.c (and copy.c, event.c, capture.c, which use these) ----------- */
/* The simhip handle for a CUDA stream handle: NULL is the legacy stream, or
 * the per-thread stream in _ptsz forms; CU_STREAM_LEGACY / _PER_THREAD. */
hipStream_t sc_stream(CUstream h, bool ptsz);
/* 906 when work on the legacy stream would depend on a capturing blocking
 * stream (hs is the simhip handle); else CUDA_SUCCESS. */
CUresult sc_implicit_check(hipStream_t hs);
/* The common entry of calls that enqueue work on hs: context, 906, and
 * the driver lock's gate. */
CUresult sc_enter_enqueue(hipStream_t hs);

#endif
