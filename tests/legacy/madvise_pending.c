/*
 * madvise_pending - madvise(MADV_DONTNEED / MADV_REMOVE) on memory just
 * unregistered, while the device is still busy with other work.
 *
 * A cache unpins a block it is done with and drops its pages at once
 * (MADV_DONTNEED on anonymous memory, MADV_REMOVE on a shared file), then
 * reuses the block: the program reads zeros right away and keeps what it
 * writes next. It also calls madvise with a length of 0 (no-op) and with a
 * misaligned address (EINVAL). Meanwhile a long kernel that never touches
 * the block runs on another stream: a tool that keeps released memory alive
 * until all earlier device work is done (under unregister=async the release
 * is still pending then) must still give madvise the kernel's answer and
 * effect.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include "legacy.h"

#define PAGE 4096
#define PAGES 4
#define LEN (PAGES * PAGE)
#define NI (LEN / (int)sizeof(int))

static hipStream_t s, busy;

/* A kernel on another stream that computes for 200 ms and touches nothing
 * of the program's: the device is busy, the block is not in use. */
static void keep_device_busy(void)
{
    static struct kargs a;
    a = (struct kargs){ .dev = NULL, .n = 0, .work_us = 200 * 1000 };
    CHECK(simhipLaunchKernel(busy, add_kernel, &a));
}

/* Pin p and let the device add 1 to it. */
static void pin_and_use(int *p, int seed)
{
    static struct kargs a;
    int *d;
    legacy_fill(p, NI, 0, seed);
    CHECK(hipHostRegister(p, LEN, hipHostRegisterMapped));
    CHECK(hipHostGetDevicePointer((void **)&d, p, 0));
    a = (struct kargs){ .dev = d, .n = NI, .add = 1 };
    CHECK(simhipLaunchKernel(s, add_kernel, &a));
    CHECK(hipStreamSynchronize(s));
    legacy_verify("before madvise", p, NI, 0, seed, 1);
}

/* Wait for the device, then register p again (another size: never a
 * revival) and unregister it: returns once every release pending on p has
 * completed, with whatever it deferred. */
static void settle(int *p)
{
    CHECK(hipDeviceSynchronize());
    CHECK(hipHostRegister(p, LEN / 2, 0));
    CHECK(hipHostUnregister(p));
}

static int all_zero(const char *what, const int *p, int n)
{
    for (int i = 0; i < n; i++) {
        if (p[i] != 0) {
            fprintf(stderr, "%s: element %d is %d, want 0 right after madvise\n", what, i, p[i]);
            (*legacy_failures())++;
            return 0;
        }
    }
    return 1;
}

static void expect_rc(const char *what, int rc, int want_rc, int want_errno)
{
    if (rc != want_rc || (rc != 0 && errno != want_errno)) {
        fprintf(stderr, "%s returned %d (errno %d), expected %d (errno %d)\n", what, rc, errno,
                want_rc, want_rc ? want_errno : 0);
        (*legacy_failures())++;
    }
}

int main(void)
{
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    CHECK(hipStreamCreateWithFlags(&busy, hipStreamNonBlocking));
    int *p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return 2;

    /* 1. MADV_DONTNEED: zeros at once, and the next writes stay. */
    pin_and_use(p, 1);
    keep_device_busy();
    CHECK(hipHostUnregister(p));
    expect_rc("madvise(MADV_DONTNEED)", madvise(p, LEN, MADV_DONTNEED), 0, 0);
    all_zero("anonymous block", p, NI);
    legacy_fill(p, NI, 0, 2);
    settle(p);
    legacy_verify("written after MADV_DONTNEED", p, NI, 0, 2, 0);

    /* 2. Length 0 does nothing; a misaligned address is EINVAL and does
     *    nothing either, now or later. */
    pin_and_use(p, 3);
    keep_device_busy();
    CHECK(hipHostUnregister(p));
    expect_rc("madvise(p, 0, MADV_DONTNEED)", madvise(p, 0, MADV_DONTNEED), 0, 0);
    errno = 0;
    expect_rc("madvise(p + 1, ..., MADV_DONTNEED)",
              madvise((char *)p + 1, PAGE, MADV_DONTNEED), -1, EINVAL);
    settle(p);
    legacy_verify("after no-op madvise calls", p, NI, 0, 3, 1);
    munmap(p, LEN);

    /* 3. MADV_REMOVE on a shared file: the file's pages are punched at
     *    once, and what the program writes to the file next stays. */
    int fd = memfd_create("madvise_pending", 0);
    if (fd < 0 || ftruncate(fd, LEN) != 0)
        return 2;
    int *f = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (f == MAP_FAILED)
        return 2;
    pin_and_use(f, 4);
    keep_device_busy();
    CHECK(hipHostUnregister(f));
    expect_rc("madvise(MADV_REMOVE)", madvise(f, LEN, MADV_REMOVE), 0, 0);
    all_zero("shared file block", f, NI);
    static int data[NI];
    legacy_fill(data, NI, 0, 5);
    if (pwrite(fd, data, LEN, 0) != LEN)
        return 2;
    settle(f);
    legacy_verify("file written after MADV_REMOVE (mapping)", f, NI, 0, 5, 0);
    memset(data, 0, sizeof data);
    if (pread(fd, data, LEN, 0) != LEN)
        return 2;
    legacy_verify("file written after MADV_REMOVE (file)", data, NI, 0, 5, 0);
    munmap(f, LEN);
    close(fd);

    CHECK(hipStreamDestroy(busy));
    CHECK(hipStreamDestroy(s));
    return legacy_finish();
}
