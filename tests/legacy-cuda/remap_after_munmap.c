/*
 * remap_after_munmap.c - a single-threaded driver-API program unmaps 16 MiB
 * whose first 64 KiB are still registered, and maps the same addresses
 * again.
 *
 * A single-threaded program owns its address space: bare, the address it
 * just gave back is free, so MAP_FIXED_NOREPLACE there succeeds, and a
 * MAP_FIXED there replaces nothing but what the program unmapped. Both
 * ways, in turn, with device work after each. (The registration is never
 * unregistered: the program forgot; under safepin that is a
 * freed-while-registered diagnostic.)
 */
#include <errno.h>
#include <sys/mman.h>

#include "legacy_cuda.h"

#define PAGE 4096ul
#define HEAD (64ul << 10)
#define LEN (16ul << 20)

static int failures;

static void nop_kernel(void *arg) { (void)arg; }

static void round_trip(CUstream s, int flag)
{
    char *p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        exit(2);
    memset(p, 1, HEAD);
    CHECK(cuMemHostRegister_v2(p, HEAD, CU_MEMHOSTREGISTER_DEVICEMAP));
    CHECK(simcudaLaunchKernel(s, nop_kernel, NULL));
    CHECK(cuStreamSynchronize(s));
    if (munmap(p, LEN) != 0) /* still registered: the program forgot */
        exit(2);
    char *q = mmap(p, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | flag, -1, 0);
    if (q != p) {
        fprintf(stderr, "mmap(%s) at %p: %s\n",
                flag == MAP_FIXED ? "MAP_FIXED" : "MAP_FIXED_NOREPLACE", (void *)p,
                q == MAP_FAILED ? strerror(errno) : "another address");
        failures++;
        if (q != MAP_FAILED)
            munmap(q, LEN);
        return;
    }
    memset(q, 0x33, LEN);
    char *buf = aligned_alloc(PAGE, HEAD);
    for (int r = 0; buf && r < 10; r++) {
        CHECK(cuMemHostRegister_v2(buf, HEAD, CU_MEMHOSTREGISTER_DEVICEMAP));
        CHECK(simcudaLaunchKernel(s, nop_kernel, NULL));
        CHECK(cuMemHostUnregister(buf));
    }
    free(buf);
    for (size_t off = 0; off < LEN; off += PAGE)
        if (q[off] != 0x33) {
            fprintf(stderr, "page at +0x%zx changed under the program\n", off);
            failures++;
            break;
        }
    munmap(q, LEN);
}

int main(void)
{
    lc_init();
    CUstream s;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    round_trip(s, MAP_FIXED_NOREPLACE);
    round_trip(s, MAP_FIXED);
    CHECK(cuStreamDestroy(s));
    if (failures) {
        fprintf(stderr, "FAILED: %d\n", failures);
        return 1;
    }
    printf("OK\n");
    return 0;
}
