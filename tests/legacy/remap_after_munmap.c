/*
 * remap_after_munmap - a single-threaded program unmaps 16 MiB whose first
 * 64 KiB are still registered, and maps the same addresses again.
 *
 * A single-threaded program owns its address space: bare, the address it
 * just gave back is free, so MAP_FIXED_NOREPLACE there succeeds, and a
 * MAP_FIXED there replaces nothing but what the program unmapped. Both
 * ways, in turn, with device work after each.
 */
#include <errno.h>
#include <sys/mman.h>
#include "legacy.h"

#define PAGE 4096ul
#define HEAD (64ul << 10)
#define LEN (16ul << 20)

static int round_trip(hipStream_t s, int flag, int seed)
{
    char *p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return 2;
    size_t n = HEAD / sizeof(int);
    legacy_fill((int *)p, n, 0, seed);
    CHECK(hipHostRegister(p, HEAD, hipHostRegisterMapped));
    void *dev;
    CHECK(hipHostGetDevicePointer(&dev, p, 0));
    static struct kargs k;
    k = (struct kargs){ .dev = dev, .n = n, .add = 1 };
    CHECK(simhipLaunchKernel(s, add_kernel, &k));
    CHECK(hipStreamSynchronize(s));
    legacy_verify("head", (int *)p, n, 0, seed, 1);
    if (munmap(p, LEN) != 0) /* still registered: the program forgot */
        return 2;
    char *q = mmap(p, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | flag, -1, 0);
    if (q != p) {
        fprintf(stderr, "mmap(%s) at %p: %s\n",
                flag == MAP_FIXED ? "MAP_FIXED" : "MAP_FIXED_NOREPLACE", (void *)p,
                q == MAP_FAILED ? strerror(errno) : "another address");
        (*legacy_failures())++;
        if (q != MAP_FAILED)
            munmap(q, LEN);
        return 0;
    }
    memset(q, 0x33, LEN);
    /* more device work, on fresh memory */
    int *buf = aligned_alloc(PAGE, HEAD);
    for (int r = 0; buf && r < 10; r++) {
        legacy_fill(buf, n, 0, r);
        CHECK(hipHostRegister(buf, HEAD, hipHostRegisterMapped));
        CHECK(hipHostGetDevicePointer(&dev, buf, 0));
        k = (struct kargs){ .dev = dev, .n = n, .add = 4 };
        CHECK(simhipLaunchKernel(s, add_kernel, &k));
        /* done before the unregister: ROCm 5.2's waits for the null stream
         * only, and this stream is a non-blocking one */
        CHECK(hipStreamSynchronize(s));
        CHECK(hipHostUnregister(buf));
        legacy_verify("buf", buf, n, 0, r, 4);
    }
    free(buf);
    for (size_t off = 0; off < LEN; off += PAGE)
        if (q[off] != 0x33) {
            fprintf(stderr, "page at +0x%zx changed under the program\n", off);
            (*legacy_failures())++;
            break;
        }
    munmap(q, LEN);
    return 0;
}

int main(void)
{
    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    if (round_trip(s, MAP_FIXED_NOREPLACE, 1) || round_trip(s, MAP_FIXED, 2))
        return 2;
    CHECK(hipStreamDestroy(s));
    return legacy_finish();
}
