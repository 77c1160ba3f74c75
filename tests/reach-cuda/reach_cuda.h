/*
 * reach_cuda.h - helpers of the reach tests: how a CUDA program got its
 * driver functions, and the hazard it then meets through them.
 *
 * Each program prints one line per function it obtained:
 *   got <asked> -> <symbol> in <object>
 * (dladdr's answer for the pointer), then runs the identical re-register
 * hazard through those pointers (two components pin one buffer: 712 on the
 * bare driver). run.sh checks the lines and the outcome from outside.
 */
#ifndef REACH_CUDA_H
#define REACH_CUDA_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_min.h"

static inline void rc_show(const char *asked, void *fn)
{
    Dl_info di;
    const char *obj = "?", *sym = "?";
    if (fn && dladdr(fn, &di)) {
        obj = di.dli_fname ? strrchr(di.dli_fname, '/') ? strrchr(di.dli_fname, '/') + 1 : di.dli_fname : "?";
        sym = di.dli_sname && di.dli_saddr == fn ? di.dli_sname : "?";
    }
    printf("got %s -> %s in %s\n", asked, fn ? sym : "NULL", obj);
}

typedef struct rc_api {
    CUresult (*init)(unsigned);
    CUresult (*device_get)(CUdevice *, int);
    CUresult (*retain)(CUcontext *, CUdevice);
    CUresult (*set_current)(CUcontext);
    CUresult (*reg)(void *, size_t, unsigned);
    CUresult (*unreg)(void *);
} rc_api;

#define RC_CHECK(call)                                                                 \
    do {                                                                               \
        CUresult e_ = (call);                                                          \
        if (e_ != CUDA_SUCCESS) {                                                      \
            fprintf(stderr, "%s failed: %d%s\n", #call, (int)e_,                       \
                    e_ == CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED ? " (712)" : "");  \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

/* Two components pin the same buffer, each unpins what it pinned. */
static inline int rc_hazard(const rc_api *a)
{
    static char buf[1 << 16];
    CUdevice dev;
    CUcontext ctx;
    RC_CHECK(a->init(0));
    RC_CHECK(a->device_get(&dev, 0));
    RC_CHECK(a->retain(&ctx, dev));
    RC_CHECK(a->set_current(ctx));
    RC_CHECK(a->reg(buf, sizeof buf, 0));
    RC_CHECK(a->reg(buf, sizeof buf, 0));
    RC_CHECK(a->unreg(buf));
    RC_CHECK(a->unreg(buf));
    printf("OK\n");
    return 0;
}

#endif
