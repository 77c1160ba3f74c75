/*
 * bad_mem_args - munmap and mmap calls the kernel refuses, on pinned memory;
 * and one munmap over holes that it accepts.
 *
 * A program's mapping code has off-by-one and length bugs: munmap(p, 0),
 * munmap of a misaligned address, munmap with a length past the end of the
 * address space, mmap(MAP_FIXED) at a misaligned address or with a bad
 * descriptor. The kernel refuses each (EINVAL, EBADF) and changes nothing,
 * so the pinned block stays mapped and registered: the device keeps using
 * it and hipHostUnregister succeeds. Then an arena is released with one
 * munmap over its holes: every page of it is gone at once, and a new
 * mapping placed in a former hole is the program's to keep.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include "legacy.h"

#define PAGE 4096
#define PAGES 4
#define LEN (PAGES * PAGE)
#define NI (LEN / (int)sizeof(int))

static void expect_fail(const char *what, long rc, int want_errno)
{
    if (rc != -1 || errno != want_errno) {
        fprintf(stderr, "%s returned %ld (errno %d), expected -1 (errno %d)\n", what, rc, errno,
                want_errno);
        (*legacy_failures())++;
    }
}

/* 1 if a mapping of the file named name is in /proc/self/maps. */
static int maps_file(const char *name)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int found = 0;
    while (f && fgets(line, sizeof line, f))
        if (strstr(line, name))
            found = 1;
    if (f)
        fclose(f);
    return found;
}

static int mapped(const void *p, size_t len)
{
    unsigned char vec[64];
    return mincore((void *)p, len, vec) == 0;
}

int main(void)
{
    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    char *p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return 2;
    int *ip = (int *)p;
    legacy_fill(ip, NI, 0, 1);
    CHECK(hipHostRegister(p, LEN, hipHostRegisterMapped));
    int *d;
    CHECK(hipHostGetDevicePointer((void **)&d, p, 0));

    errno = 0;
    expect_fail("munmap(p, 0)", munmap(p, 0), EINVAL);
    errno = 0;
    expect_fail("munmap(p + 1, PAGE)", munmap(p + 1, PAGE), EINVAL);
#ifndef __SANITIZE_THREAD__
    /* (TSan's munmap interceptor clears the shadow of the range before the
     * kernel answers, and crashes on one past the address space.) */
    errno = 0;
    expect_fail("munmap(p, 1 << 62)", munmap(p, (size_t)1 << 62), EINVAL);
#endif
    errno = 0;
    expect_fail("mmap(p + 1, MAP_FIXED)",
                (long)mmap(p + 1, PAGE, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0),
                EINVAL);
    errno = 0;
    expect_fail("mmap(p, MAP_FIXED, bad descriptor)",
                (long)mmap(p, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, 1000, 0),
                EBADF);

    /* Nothing changed: the device uses the block, and it unregisters once. */
    static struct kargs a;
    a = (struct kargs){ .dev = d, .n = NI, .add = 1 };
    CHECK(simhipLaunchKernel(s, add_kernel, &a));
    CHECK(hipStreamSynchronize(s));
    legacy_verify("block after refused calls", ip, NI, 0, 1, 1);
    EXPECT_ERR(hipHostUnregister(p), hipSuccess);
    legacy_verify("block after unregister", ip, NI, 0, 1, 1);
    munmap(p, LEN);

    /* An arena of 16 pages: [0,4) plain (a file of its own), [4,8) a
     * hole, [8,12) pinned, [12,16) a hole. One munmap releases all of it
     * (forgetting the pin). */
    int fd = memfd_create("bad_mem_args_plain", 0);
    if (fd < 0 || ftruncate(fd, LEN) != 0)
        return 2;
    char *arena = mmap(NULL, 16 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (arena == MAP_FAILED ||
        mmap(arena, LEN, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) != arena)
        return 2;
    char *pinned = arena + 8 * PAGE;
    legacy_fill((int *)pinned, NI, 0, 2);
    CHECK(hipHostRegister(pinned, LEN, hipHostRegisterMapped));
    CHECK(hipHostGetDevicePointer((void **)&d, pinned, 0));
    a = (struct kargs){ .dev = d, .n = NI, .add = 1 };
    CHECK(simhipLaunchKernel(s, add_kernel, &a));
    CHECK(hipStreamSynchronize(s));
    legacy_verify("pinned arena part", (int *)pinned, NI, 0, 2, 1);
    munmap(arena + 4 * PAGE, 4 * PAGE);
    munmap(arena + 12 * PAGE, 4 * PAGE);

    /* The device is busy with unrelated work meanwhile. */
    hipStream_t busy;
    CHECK(hipStreamCreateWithFlags(&busy, hipStreamNonBlocking));
    static struct kargs other;
    other = (struct kargs){ .dev = NULL, .n = 0, .work_us = 100 * 1000 };
    CHECK(simhipLaunchKernel(busy, add_kernel, &other));
    if (munmap(arena, 16 * PAGE) != 0) {
        perror("munmap(arena)");
        return 1;
    }
    /* A new block in the first hole (unless another thread took the place
     * first), then the pinned part's place is mapped again (MAP_FIXED,
     * which waits for whatever is pending there): the new block stays. */
    char *hole = mmap(arena + 4 * PAGE, LEN, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (hole == MAP_FAILED && errno == EEXIST) {
        printf("note: the arena's former hole was taken by another mapping\n");
        hole = NULL;
    } else if (hole != arena + 4 * PAGE) {
        fprintf(stderr, "mmap(MAP_FIXED_NOREPLACE) in the arena's former hole failed\n");
        return 1;
    }
    if (hole)
        legacy_fill((int *)hole, NI, 0, 3);
    if (maps_file("bad_mem_args_plain")) {
        fprintf(stderr, "the arena's plain pages are still mapped after munmap\n");
        (*legacy_failures())++;
    }
    close(fd);
    char *again = mmap(pinned, LEN, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (again != pinned) {
        perror("mmap(MAP_FIXED) over the arena's pinned part");
        return 1;
    }
    if (hole) {
        if (!mapped(hole, LEN)) {
            fprintf(stderr, "the new block in the former hole was unmapped\n");
            return 1;
        }
        legacy_verify("new block in the former hole", (int *)hole, NI, 0, 3, 0);
        munmap(hole, LEN);
    }
    munmap(again, LEN);
    CHECK(hipStreamDestroy(busy));

    CHECK(hipStreamDestroy(s));
    return legacy_finish();
}
