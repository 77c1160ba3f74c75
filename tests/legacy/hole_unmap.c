/*
 * hole_unmap - one munmap over an arena with a large hole, a pinned block
 * still registered in it.
 *
 * A program reserves a 64 MiB arena, pins 4 pages near its end and uses
 * them with the device, then, its work done, gives a 40 MiB stretch of it
 * back (munmap) and at once releases the whole arena with one munmap over
 * the hole: every page of the span goes at once. Without
 * safepin that is the program's business and it works. Under safepin the
 * munmap frees memory still registered, so a release starts; whatever
 * safepin maps while it handles that munmap (the thread that completes
 * releases: its stack, its thread-local blocks) must not be placed in the
 * hole before the real munmap empties it, or the program's munmap takes
 * safepin's own memory with it (a crash later, in safepin's thread).
 * Afterwards the program goes on registering and using new memory.
 */
#include <sys/mman.h>
#include "legacy.h"

#define MIB (1024 * 1024)
#define ARENA (64 * MIB)
#define PINNED (4 * 4096)
#define NI (PINNED / (int)sizeof(int))

static void use(hipStream_t s, int *host, int seed, const char *what)
{
    int *d;
    CHECK(hipHostGetDevicePointer((void **)&d, host, 0));
    static struct kargs a;
    a = (struct kargs){ .dev = d, .n = NI, .add = 1 };
    CHECK(simhipLaunchKernel(s, add_kernel, &a));
    CHECK(hipStreamSynchronize(s));
    legacy_verify(what, host, NI, 0, seed, 1);
}

int main(void)
{
    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    /* The runtime's own threads are started first (the stream's work). */
    static struct kargs warm;
    warm = (struct kargs){ .dev = NULL, .n = 0, .work_us = 1000 };
    CHECK(simhipLaunchKernel(s, add_kernel, &warm));
    CHECK(hipStreamSynchronize(s));
    char *arena = mmap(NULL, ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (arena == MAP_FAILED)
        return 2;
    /* Every gap above the arena that a thread's stack fits in is taken, so
     * that the hole is where the kernel places the next thread's stack. */
    size_t fill = 8 * MIB + 4096;
    for (int i = 0; i < 4096; i++) {
        char *f = mmap(NULL, fill, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (f == MAP_FAILED)
            return 2;
        if (f < arena) {
            munmap(f, fill);
            break;
        }
    }
    int *pinned = (int *)(arena + ARENA - 2 * PINNED);
    legacy_fill(pinned, NI, 0, 5);
    CHECK(hipHostRegister(pinned, PINNED, hipHostRegisterMapped));
    use(s, pinned, 5, "pinned block in the arena");

    /* The stretch goes back right before the arena does, with no call in
     * between: nothing of the program's (its allocator, the runtime) can
     * have been placed in the hole by then, so the arena's munmap empties
     * only what the program mapped. */
    if (munmap(arena + 16 * MIB, 40 * MIB) != 0)
        return 2;
    if (munmap(arena, ARENA) != 0) {
        perror("munmap(arena)");
        return 1;
    }

    /* New memory, registered and used, then unregistered: the program goes
     * on (and safepin's releases with it). */
    for (int i = 0; i < 4; i++) {
        int *buf = mmap(NULL, PINNED, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (buf == MAP_FAILED)
            return 2;
        legacy_fill(buf, NI, 0, 6 + i);
        CHECK(hipHostRegister(buf, PINNED, hipHostRegisterMapped));
        use(s, buf, 6 + i, "a new block after the arena");
        EXPECT_ERR(hipHostUnregister(buf), hipSuccess);
        munmap(buf, PINNED);
    }
    CHECK(hipDeviceSynchronize());
    CHECK(hipStreamDestroy(s));
    return legacy_finish();
}
