/*
 * mremap_registered - mremap of pinned memory the program forgot to unpin.
 *
 * A growable buffer pool moves its pinned blocks with mremap when they grow
 * (without hipHostUnregister first), as it would any mapping:
 *   1. a MAP_SHARED file block grows and moves: it stays shared with the file;
 *   2. an alias of a shared block (old_size 0) leaves the original intact;
 *   3. an old_size larger than the block's mapping fails with EFAULT and
 *      leaves the block (and its registration) as it was;
 *   4. MREMAP_DONTUNMAP moves the pages: the old range reads zeros;
 *   5. a block made read-only stays read-only where it moves.
 * Each result is what the kernel gives, with or without safepin.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include "legacy.h"

#define PAGE 4096
#define PAGES 4
#define LEN (PAGES * PAGE)
#define NI (LEN / (int)sizeof(int))

static hipStream_t s;

static void *map(size_t len, int prot, int flags, int fd)
{
    void *p = mmap(NULL, len, prot, flags, fd, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        exit(2);
    }
    return p;
}

/* Pin p, let the device add 1, wait. */
static void pin_and_use(int *p, size_t len, int seed)
{
    static struct kargs a;
    int *d;
    int n = (int)(len / sizeof(int));
    legacy_fill(p, n, 0, seed);
    CHECK(hipHostRegister(p, len, hipHostRegisterMapped));
    CHECK(hipHostGetDevicePointer((void **)&d, p, 0));
    a = (struct kargs){ .dev = d, .n = n, .add = 1 };
    CHECK(simhipLaunchKernel(s, add_kernel, &a));
    CHECK(hipStreamSynchronize(s));
    legacy_verify("pinned block", p, n, 0, seed, 1);
}

static void fail(const char *what)
{
    fprintf(stderr, "%s\n", what);
    (*legacy_failures())++;
}

/* Protection of the mapping at p, from /proc/self/maps ("rw-p"...). */
static int prot_of(const void *p, char perms[5])
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int found = 0;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) == 3 && lo <= (uintptr_t)p &&
            (uintptr_t)p < hi) {
            found = 1;
            break;
        }
    }
    if (f)
        fclose(f);
    return found;
}

int main(void)
{
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));

    /* 1. A shared file block grows and moves: still the file's pages. */
    int fd = memfd_create("mremap_registered", 0);
    if (fd < 0 || ftruncate(fd, 2 * LEN) != 0)
        return 2;
    int *a = map(LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd);
    pin_and_use(a, LEN, 1);
    int *a2 = mremap(a, LEN, 2 * LEN, MREMAP_MAYMOVE);
    if (a2 == MAP_FAILED) {
        perror("mremap (shared, grow)");
        return 1;
    }
    legacy_verify("moved shared block", a2, NI, 0, 1, 1);
    a2[0] = 12345;
    a2[NI] = 678;
    int v[2] = { 0, 0 };
    if (pread(fd, &v[0], sizeof(int), 0) != sizeof(int) ||
        pread(fd, &v[1], sizeof(int), LEN) != sizeof(int))
        return 2;
    if (v[0] != 12345 || v[1] != 678)
        fail("moved shared block: writes through the new mapping are not in the file");
    munmap(a2, 2 * LEN);

    /* 2. An alias (old_size 0) of a shared block: the original stays. */
    int *b = map(LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd);
    pin_and_use(b, LEN, 2);
    int *alias = mremap(b, 0, LEN, MREMAP_MAYMOVE);
    if (alias == MAP_FAILED) {
        perror("mremap (alias)");
        return 1;
    }
    alias[1] = 4242;
    if (b[1] != 4242)
        fail("alias: a write through the alias is not seen through the original");
    legacy_verify("original after alias", b + 2, NI - 2, 2, 2, 1);
    EXPECT_ERR(hipHostUnregister(b), hipSuccess); /* the original's registration is untouched */
    legacy_verify("original after unregister", b + 2, NI - 2, 2, 2, 1);
    munmap(alias, LEN);
    munmap(b, LEN);
    close(fd);

    /* 3. old_size past the end of the mapping: EFAULT, nothing changes. */
    int *c = map(2 * LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
    if (mprotect((char *)c + LEN, LEN, PROT_NONE) != 0)
        return 2;
    pin_and_use(c, LEN, 3);
    errno = 0;
    void *r = mremap(c, 2 * LEN, 4 * LEN, MREMAP_MAYMOVE);
    if (r != MAP_FAILED || errno != EFAULT) {
        fprintf(stderr, "mremap(old_size past the mapping) returned %p errno %d, expected EFAULT\n",
                r, errno);
        (*legacy_failures())++;
    }
    /* Still registered: the device uses it again, and it unregisters. */
    static struct kargs ka;
    int *dc;
    CHECK(hipHostGetDevicePointer((void **)&dc, c, 0));
    ka = (struct kargs){ .dev = dc, .n = NI, .add = 1 };
    CHECK(simhipLaunchKernel(s, add_kernel, &ka));
    CHECK(hipStreamSynchronize(s));
    legacy_verify("block after the refused mremap", c, NI, 0, 3, 2);
    EXPECT_ERR(hipHostUnregister(c), hipSuccess);
    munmap(c, 2 * LEN);

    /* 4. MREMAP_DONTUNMAP: the pages move, the old range reads zeros. */
    int *d = map(LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
    pin_and_use(d, LEN, 4);
    int *d2 = mremap(d, LEN, LEN, MREMAP_MAYMOVE | MREMAP_DONTUNMAP, NULL);
    if (d2 == MAP_FAILED) {
        perror("mremap (MREMAP_DONTUNMAP)");
        return 1;
    }
    legacy_verify("moved by MREMAP_DONTUNMAP", d2, NI, 0, 4, 1);
    for (int i = 0; i < NI; i++) {
        if (d[i] != 0) {
            fail("MREMAP_DONTUNMAP: the old range does not read zeros");
            break;
        }
    }
    d[0] = 1; /* still mapped */
    munmap(d2, LEN);
    munmap(d, LEN);

    /* 5. A read-only block stays read-only where it moves. */
    int *e = map(LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
    pin_and_use(e, LEN, 5);
    if (mprotect(e, LEN, PROT_READ) != 0)
        return 2;
    int *e2 = mremap(e, LEN, 2 * LEN, MREMAP_MAYMOVE);
    if (e2 == MAP_FAILED) {
        perror("mremap (read-only)");
        return 1;
    }
    char perms[5] = "";
    if (!prot_of(e2, perms) || perms[0] != 'r' || perms[1] != '-') {
        fprintf(stderr, "read-only block moved to a mapping with permissions '%s'\n", perms);
        (*legacy_failures())++;
    }
    legacy_verify("moved read-only block", e2, NI, 0, 5, 1);
    munmap(e2, 2 * LEN);

    CHECK(hipStreamDestroy(s));
    return legacy_finish();
}
