/*
 * hip_check.h - CHECK, shared by the programs that call HIP directly
 * (tests/legacy through legacy.h, bench/ through bench.h).
 */
#ifndef SAFEPIN_TESTS_HIP_CHECK_H
#define SAFEPIN_TESTS_HIP_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <hip/hip_runtime_api.h>

/* A HIP call that must succeed: on failure name it, its error, and exit 1. */
#define CHECK(call)                                                            \
    do {                                                                       \
        hipError_t err_ = (call);                                              \
        if (err_ != hipSuccess) {                                              \
            fprintf(stderr, "%s:%d: %s failed: %s (%d)\n", __FILE__, __LINE__, \
                    #call, hipGetErrorName(err_), (int)err_);                  \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

#endif
