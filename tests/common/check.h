/*
 * check.h - CHECK_AS, the call that must succeed, for any runtime's error
 * type: on failure it names the call and its error, and exits 1.
 * hip_check.h (HIP) and tests/legacy-cuda/legacy_cuda.h (the CUDA driver)
 * define CHECK with it.
 */
#ifndef SAFEPIN_TESTS_CHECK_H
#define SAFEPIN_TESTS_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK_AS(type, ok, name_of, call)                                      \
    do {                                                                       \
        type err_ = (call);                                                    \
        if (err_ != (ok)) {                                                    \
            fprintf(stderr, "%s:%d: %s failed: %s (%d)\n", __FILE__, __LINE__, \
                    #call, name_of(err_), (int)err_);                          \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

#endif
