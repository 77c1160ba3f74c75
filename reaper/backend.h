/*
 * backend.h - the real functions: the only place that names the runtime.
 *
 * sp_real holds a pointer per entry of hooks.inc. interpose/real.c fills it
 * with dlsym(RTLD_NEXT) once; unit tests fill it with whatever they test
 * against (simhip, or fakes). A second runtime (CUDA) would be a second
 * table, not a fork of the logic.
 */
#ifndef SAFEPIN_BACKEND_H
#define SAFEPIN_BACKEND_H

#include <stddef.h>
#include <sys/types.h>
#include <hip/hip_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sp_backend {
#define SP_REAL(kind, ret, name, params) ret (*name) params;
#include "hooks.inc"
#undef SP_REAL
} sp_backend;

extern sp_backend sp_real;

#ifdef __cplusplus
}
#endif
#endif
