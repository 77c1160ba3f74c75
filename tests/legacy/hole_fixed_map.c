/*
 * hole_fixed_map - one fixed mapping over an arena with a large hole, a
 * pinned block still registered in it.
 *
 * A program reserves a 64 MiB arena, pins a block at each end and uses
 * them with the device, then, its work done, gives a 48 MiB stretch of it
 * back (munmap) and at once resets the whole arena with one
 * mmap(MAP_FIXED):
 * every page of the span is replaced at once, whatever is mapped there by
 * then, and reads zeros. Without safepin that works. Under safepin the
 * fixed mapping frees memory still registered, so a release starts (the
 * first one: the thread that completes releases starts with it) and the
 * call waits for it: whatever safepin maps meanwhile (that thread's stack
 * and thread-local blocks) must not be placed in the hole, or the
 * program's fixed mapping replaces safepin's own memory (a crash later, in
 * safepin's thread). The gaps above the arena are filled first, so that
 * the hole is where the kernel places the next thread's stack. The program
 * then goes on registering and using new memory.
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
    /* Every gap above the arena that a thread's stack fits in is taken. */
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
    int *p1 = (int *)arena;
    int *p2 = (int *)(arena + ARENA - 2 * PINNED);
    legacy_fill(p1, NI, 0, 4);
    legacy_fill(p2, NI, 0, 5);
    CHECK(hipHostRegister(p1, PINNED, hipHostRegisterMapped));
    CHECK(hipHostRegister(p2, PINNED, hipHostRegisterMapped));
    use(s, p1, 4, "first pinned block");
    use(s, p2, 5, "second pinned block");

    /* The stretch goes back right before the fixed mapping, with no call
     * in between: nothing of the program's (its allocator, the runtime)
     * can have been placed in the hole by then. */
    if (munmap(arena + 8 * MIB, 48 * MIB) != 0)
        return 2;
    if (mmap(arena, ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
             0) != arena) {
        perror("mmap(arena, MAP_FIXED)");
        return 1;
    }
    for (size_t i = 0; i < ARENA; i += 4096)
        if (arena[i] != 0) {
            fprintf(stderr, "the arena at +%zu is not zero after the fixed mapping\n", i);
            return 1;
        }

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
    munmap(arena, ARENA);
    CHECK(hipDeviceSynchronize());
    CHECK(hipStreamDestroy(s));
    return legacy_finish();
}
