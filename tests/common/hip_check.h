/*
 * hip_check.h - CHECK, shared by the programs that call HIP directly
 * (tests/legacy through legacy.h, bench/ through bench.h).
 */
#ifndef SAFEPIN_TESTS_HIP_CHECK_H
#define SAFEPIN_TESTS_HIP_CHECK_H

#include <hip/hip_runtime_api.h>
#include "check.h"

/* A HIP call that must succeed: on failure name it, its error, and exit 1. */
#define CHECK(call) CHECK_AS(hipError_t, hipSuccess, hipGetErrorName, call)

#endif
