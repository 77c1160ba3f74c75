/*
 * reregister_larger - re-register a just-unregistered pointer at a larger
 * size while the work of the old registration is still in flight.
 *
 * A pipeline pins the first half of a buffer, starts a long kernel on it on a
 * non-blocking stream, unpins, prepares the next, larger batch in the same
 * buffer (host work), pins the whole buffer and runs the next kernel over
 * all of it. With ROCm 5.2-5.5 the first kernel runs while the buffer is not
 * pinned at all (GPU fault). Round 2 does the same without the host work in
 * between: the new registration must not inherit the old one's size.
 */
#include "legacy.h"

#define HALF (64 * 1024) /* 256 KiB of ints */

static void round_trip(hipStream_t stream, int *buf, int round, unsigned host_work_us)
{
    static struct kargs a1, a2;
    int seed = 20 + round;
    int *dbuf;

    legacy_fill(buf, HALF, 0, seed);
    CHECK(hipHostRegister(buf, HALF * sizeof(int), hipHostRegisterMapped));
    CHECK(hipHostGetDevicePointer((void **)&dbuf, buf, 0));
    a1 = (struct kargs){ .dev = dbuf, .n = HALF, .add = 1, .work_us = 30000 };
    CHECK(simhipLaunchKernel(stream, add_kernel, &a1));
    CHECK(hipHostUnregister(buf));

    /* prepare the next batch: the second half (read from "disk") */
    legacy_fill(buf + HALF, HALF, HALF, seed);
    if (host_work_us)
        usleep(host_work_us);

    CHECK(hipHostRegister(buf, 2 * HALF * sizeof(int), hipHostRegisterMapped));
    CHECK(hipHostGetDevicePointer((void **)&dbuf, buf, 0));
    a2 = (struct kargs){ .dev = dbuf, .n = 2 * HALF, .add = 2 };
    CHECK(simhipLaunchKernel(stream, add_kernel, &a2));
    CHECK(hipStreamSynchronize(stream));

    char what[32];
    snprintf(what, sizeof(what), "round %d, first half", round);
    legacy_verify(what, buf, HALF, 0, seed, 3);
    snprintf(what, sizeof(what), "round %d, second half", round);
    legacy_verify(what, buf + HALF, HALF, HALF, seed, 2);
    CHECK(hipHostUnregister(buf));
}

int main(void)
{
    int *buf = aligned_alloc(4096, 2 * HALF * sizeof(int));
    if (!buf)
        return 2;
    hipStream_t stream;
    CHECK(hipStreamCreateWithFlags(&stream, hipStreamNonBlocking));

    round_trip(stream, buf, 1, 80000); /* the old kernel runs in the gap */
    round_trip(stream, buf, 2, 0);     /* re-register at once */

    CHECK(hipStreamDestroy(stream));
    free(buf);
    return legacy_finish();
}
