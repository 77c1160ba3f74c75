/*
 * hip.h - the HIP face: its slot among the runtimes, and the logic behind
 * each exported HIP shim (hip_shims.c), callable from tests without
 * LD_PRELOAD. One line of hip.inc names the shim, the real function
 * (sp_hip, hip_real.h) and the logic: hipHostRegister -> sp_host_register,
 * with the same parameters.
 */
#ifndef SAFEPIN_HIP_H
#define SAFEPIN_HIP_H

#include <stddef.h>
#include <stdint.h>
#include <hip/hip_runtime_api.h>
#include "hip_real.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The HIP runtime's slot (runtime.h). */
#define SP_RT_HIP 0

/* Resolves the real functions (hip_real.c) and registers the HIP table
 * with the core (hip_ops.c). Once, at start-up. */
void sp_hip_face_init(void);

#define SP_HIP(kind, need, ret, name, params, args, logic) SP_HIP_LOGIC_##kind(ret, params, logic)
#define SP_HIP_LOGIC_HOOK(ret, params, logic) ret logic params;
#define SP_HIP_LOGIC_CALL(ret, params, logic)
#include "hip.inc"
#undef SP_HIP
#undef SP_HIP_LOGIC_HOOK
#undef SP_HIP_LOGIC_CALL

/* The exported shim for a hooked HIP name, or NULL (hip_shims.c). */
void *sp_shim_for(const char *name);

#ifdef __cplusplus
}
#endif
#endif
