/*
 * two_devices.h - the two-device scenarios of the legacy programs
 * (two_dev_*.c): a registration made while device 0 is current, used by
 * device 1 through its mapped pointer (hipHostRegisterPortable | Mapped).
 *
 * On simhip the programs set SIMHIP_DEVICES=2 and re-execute themselves
 * (as second_device does); elsewhere they need two devices and say so.
 */
#ifndef TWO_DEVICES_H
#define TWO_DEVICES_H

#include <pthread.h>
#include <stdatomic.h>
#include "legacy.h"

#define TD_N (256 * 1024) /* ints: 1 MiB */

/* Two devices, or exit 2 saying why. */
static inline void td_two_devices(char **argv)
{
    if (!getenv("SIMHIP_DEVICES")) {
        setenv("SIMHIP_DEVICES", "2", 1);
        execv("/proc/self/exe", argv);
        exit(2);
    }
    int n = 0;
    CHECK(hipGetDeviceCount(&n));
    if (n < 2) {
        fprintf(stderr, "needs two GPUs: %d device(s)\n", n);
        exit(2);
    }
}

enum td_stream { TD_BLOCKING, TD_NONBLOCKING, TD_PER_THREAD };

/* A stream of the current device, of the given kind. */
static inline hipStream_t td_stream(enum td_stream kind)
{
    hipStream_t s = hipStreamPerThread;
    if (kind == TD_BLOCKING)
        CHECK(hipStreamCreate(&s));
    else if (kind == TD_NONBLOCKING)
        CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    return s;
}

/*
 * The registration is made with device 0 current; a slow kernel on device
 * 1 (on a stream of the given kind) fills it through the mapped pointer.
 * With device 0 current again, the program unregisters and reads the
 * result at once (ROCm 5.6+ waits for the device in unregister), frees the
 * buffer and takes a new one from the allocator, which may hand it the
 * same bytes, while device 1 is still busy; only then does it wait for
 * device 1, and checks that the new block kept its own contents.
 */
static inline int td_unregister_free_busy(char **argv, enum td_stream kind)
{
    td_two_devices(argv);
    size_t bytes = TD_N * sizeof(int);
    int *buf = aligned_alloc(4096, bytes);
    if (!buf)
        return 2;
    memset(buf, 0, bytes);
    CHECK(hipSetDevice(0));
    CHECK(hipHostRegister(buf, bytes, hipHostRegisterPortable | hipHostRegisterMapped));
    int *dbuf;
    CHECK(hipHostGetDevicePointer((void **)&dbuf, buf, 0));

    CHECK(hipSetDevice(1));
    hipStream_t s = td_stream(kind);
    static struct kargs fill = { .n = TD_N, .seed = 41, .work_us = 150000 };
    fill.dev = dbuf;
    CHECK(simhipLaunchKernel(s, fill_kernel, &fill));

    CHECK(hipSetDevice(0));
    CHECK(hipHostUnregister(buf)); /* device 1 still busy */
    legacy_verify("right after hipHostUnregister", buf, TD_N, 0, 41, 0);
    free(buf);
    int *next = aligned_alloc(4096, bytes);
    if (!next)
        return 2;
    legacy_fill(next, TD_N, 0, 43);

    CHECK(hipSetDevice(1));
    CHECK(hipStreamSynchronize(s));
    legacy_verify("a new block, after device 1 finished", next, TD_N, 0, 43, 0);
    if (kind != TD_PER_THREAD)
        CHECK(hipStreamDestroy(s));
    free(next);
    return legacy_finish();
}

#endif
