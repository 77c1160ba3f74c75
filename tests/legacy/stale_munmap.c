/*
 * stale_munmap - munmap of a still-registered range, then a new, larger
 * mapping at the same address registered and used past the old size.
 *
 * An arena allocator maps its arena at a preferred address. The first
 * session pins only the part of the arena it uses, and the arena is unmapped
 * without hipHostUnregister. The next arena lands at the same address and
 * the next session pins all of it; registering "succeeds", but the runtime
 * still holds the stale registration of the old size (and, on real hardware,
 * the old pages): the kernel faults past the old size.
 */
#include <sys/mman.h>
#include "legacy.h"

#define ARENA_N (32 * 1024) /* 128 KiB arena */
#define OLD_N (16 * 1024)   /* the first session pins 64 KiB of it */
#define NEW_N ARENA_N       /* the second pins all of it */

static int *map_arena(void *hint, size_t bytes)
{
    void *p = mmap(hint, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        exit(2);
    }
    return p;
}

int main(void)
{
    static struct kargs args;
    hipStream_t stream;
    CHECK(hipStreamCreate(&stream));

    int *arena = map_arena(NULL, ARENA_N * sizeof(int));
    CHECK(hipHostRegister(arena, OLD_N * sizeof(int), hipHostRegisterMapped));
    int *darena;
    CHECK(hipHostGetDevicePointer((void **)&darena, arena, 0));
    args = (struct kargs){ .dev = darena, .n = OLD_N, .seed = 1 };
    CHECK(simhipLaunchKernel(stream, fill_kernel, &args));
    CHECK(hipStreamSynchronize(stream));
    legacy_verify("first arena", arena, OLD_N, 0, 1, 0);

    munmap(arena, ARENA_N * sizeof(int)); /* forgot hipHostUnregister */

    int *arena2 = map_arena(arena, ARENA_N * sizeof(int));
    if (arena2 != arena)
        printf("note: second arena at %p, not %p\n", (void *)arena2, (void *)arena);
    legacy_fill(arena2, NEW_N, 0, 2);
    CHECK(hipHostRegister(arena2, NEW_N * sizeof(int), hipHostRegisterMapped));
    CHECK(hipHostGetDevicePointer((void **)&darena, arena2, 0));
    args = (struct kargs){ .dev = darena, .n = NEW_N, .add = 5 };
    CHECK(simhipLaunchKernel(stream, add_kernel, &args));
    CHECK(hipStreamSynchronize(stream));
    legacy_verify("second arena", arena2, NEW_N, 0, 2, 5);

    CHECK(hipHostUnregister(arena2));
    munmap(arena2, ARENA_N * sizeof(int));
    CHECK(hipStreamDestroy(stream));
    return legacy_finish();
}
