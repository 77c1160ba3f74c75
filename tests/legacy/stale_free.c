/*
 * stale_free - free of a still-registered heap block, then a new block at
 * the same address registered with a larger size and used past the old size.
 *
 * A message loop pins the part of its heap buffer it uses, and frees the
 * buffer at the end of the message without unpinning it. The next message's
 * buffer comes back at the same address; it pins the whole (larger) part it
 * needs. The runtime still holds the stale registration of the old size:
 * the kernel faults past it.
 */
#include <stdint.h>
#include "legacy.h"

#define BLOCK_N (16 * 1024) /* 64 KiB heap block */
#define OLD_N (8 * 1024)    /* first message uses 32 KiB of it */

int main(void)
{
    static struct kargs args;
    hipStream_t stream;
    CHECK(hipStreamCreate(&stream));

    int *msg = malloc(BLOCK_N * sizeof(int));
    if (!msg)
        return 2;
    legacy_fill(msg, OLD_N, 0, 3);
    CHECK(hipHostRegister(msg, OLD_N * sizeof(int), hipHostRegisterMapped));
    int *dmsg;
    CHECK(hipHostGetDevicePointer((void **)&dmsg, msg, 0));
    args = (struct kargs){ .dev = dmsg, .n = OLD_N, .add = 1 };
    CHECK(simhipLaunchKernel(stream, add_kernel, &args));
    CHECK(hipStreamSynchronize(stream));
    legacy_verify("first message", msg, OLD_N, 0, 3, 1);
    uintptr_t old_addr = (uintptr_t)msg;
    free(msg); /* forgot hipHostUnregister */

    int *msg2 = malloc(BLOCK_N * sizeof(int));
    if (!msg2)
        return 2;
    if ((uintptr_t)msg2 != old_addr)
        printf("note: second block at %p, not %#lx\n", (void *)msg2,
               (unsigned long)old_addr);
    legacy_fill(msg2, BLOCK_N, 0, 4);
    CHECK(hipHostRegister(msg2, BLOCK_N * sizeof(int), hipHostRegisterMapped));
    CHECK(hipHostGetDevicePointer((void **)&dmsg, msg2, 0));
    args = (struct kargs){ .dev = dmsg, .n = BLOCK_N, .add = 2 };
    CHECK(simhipLaunchKernel(stream, add_kernel, &args));
    CHECK(hipStreamSynchronize(stream));
    legacy_verify("second message", msg2, BLOCK_N, 0, 4, 2);

    CHECK(hipHostUnregister(msg2));
    free(msg2);
    CHECK(hipStreamDestroy(stream));
    return legacy_finish();
}
