/*
 * fixed_map_many_holes - MAP_FIXED over a span with many holes, whose head
 * is still registered.
 *
 * An allocator reserves a span, pins and uses 64 KiB at its head, gives
 * back stretches of the rest (holes of 9 MiB: room for a thread's stack),
 * then at once maps the whole span again with MAP_FIXED (a fresh arena)
 * without unregistering the head first, writes the new span (the first and
 * last page of each former hole),
 * and goes on using the device. The program owns the whole span: between
 * the holes and the MAP_FIXED it makes no call that could map anything
 * (the runtime's stream thread already runs), and a bare run never puts
 * anything there.
 */
#include <sys/mman.h>
#include "legacy.h"

#define PAGE 4096ul
#define HEAD (64ul << 10)
#define HOLE (9ul << 20)
#define HOLES 20

int main(void)
{
    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    size_t span = HEAD + HOLES * (HOLE + PAGE);
    char *p = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED)
        return 2;
    int *head = (int *)p;
    size_t n = HEAD / sizeof(int);
    legacy_fill(head, n, 0, 3);
    CHECK(hipHostRegister(head, HEAD, hipHostRegisterMapped));
    void *dev;
    CHECK(hipHostGetDevicePointer(&dev, head, 0));
    static struct kargs k;
    k = (struct kargs){ .dev = dev, .n = n, .add = 1 };
    CHECK(simhipLaunchKernel(s, add_kernel, &k));
    CHECK(hipStreamSynchronize(s));
    legacy_verify("head", head, n, 0, 3, 1);
    for (int i = 0; i < HOLES; i++)
        if (munmap(p + HEAD + (size_t)i * (HOLE + PAGE), HOLE) != 0)
            return 2;

    char *q = mmap(p, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (q != p) {
        perror("mmap(MAP_FIXED)");
        return 1;
    }
    for (int i = 0; i < HOLES; i++) { /* the program's own pages now */
        q[HEAD + (size_t)i * (HOLE + PAGE)] = 0x5a;
        q[HEAD + (size_t)i * (HOLE + PAGE) + HOLE - 1] = 0x5a;
    }

    /* More device work: safepin's thread, if it lived in the span, is gone. */
    int *buf = aligned_alloc(PAGE, HEAD);
    if (!buf)
        return 2;
    for (int round = 0; round < 20; round++) {
        legacy_fill(buf, n, 0, round);
        CHECK(hipHostRegister(buf, HEAD, hipHostRegisterMapped));
        CHECK(hipHostGetDevicePointer(&dev, buf, 0));
        k = (struct kargs){ .dev = dev, .n = n, .add = 2 };
        CHECK(simhipLaunchKernel(s, add_kernel, &k));
        /* done before the unregister: ROCm 5.2's waits for the null stream
         * only, and this stream is a non-blocking one */
        CHECK(hipStreamSynchronize(s));
        CHECK(hipHostUnregister(buf));
        legacy_verify("buf", buf, n, 0, round, 2);
    }
    for (int i = 0; i < HOLES; i++)
        if (q[HEAD + (size_t)i * (HOLE + PAGE)] != 0x5a ||
            q[HEAD + (size_t)i * (HOLE + PAGE) + HOLE - 1] != 0x5a) {
            fprintf(stderr, "hole %d changed under the program\n", i);
            (*legacy_failures())++;
            break;
        }
    free(buf);
    munmap(q, span);
    CHECK(hipStreamDestroy(s));
    return legacy_finish();
}
