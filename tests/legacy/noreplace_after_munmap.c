/*
 * noreplace_after_munmap - MAP_FIXED_NOREPLACE where pinned memory was just
 * unmapped (without hipHostUnregister).
 *
 * An allocator keeps its slabs at fixed addresses and maps them with
 * MAP_FIXED_NOREPLACE, so that it never clobbers a mapping it does not own.
 * A slab is pinned, used by the device, then unmapped while still pinned
 * (the device is busy meanwhile with unrelated work on another stream), and
 * mapped again at the same address: the kernel accepts (the address is
 * free), and the new slab is fresh (zero) memory.
 */
#include <errno.h>
#include <sys/mman.h>
#include "legacy.h"

#define PAGE 4096
#define PAGES 8
#define LEN (PAGES * PAGE)
#define NI (LEN / (int)sizeof(int))

int main(void)
{
    hipStream_t s, busy;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    CHECK(hipStreamCreateWithFlags(&busy, hipStreamNonBlocking));
    int *slab = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (slab == MAP_FAILED)
        return 2;
    for (int round = 0; round < 3; round++) {
        legacy_fill(slab, NI, 0, round);
        CHECK(hipHostRegister(slab, LEN, hipHostRegisterMapped));
        int *d;
        CHECK(hipHostGetDevicePointer((void **)&d, slab, 0));
        static struct kargs a;
        a = (struct kargs){ .dev = d, .n = NI, .add = 1 };
        CHECK(simhipLaunchKernel(s, add_kernel, &a));
        CHECK(hipStreamSynchronize(s));
        legacy_verify("slab", slab, NI, 0, round, 1);
        if (round == 2) {
            CHECK(hipHostUnregister(slab));
            break;
        }

        static struct kargs other;
        other = (struct kargs){ .dev = NULL, .n = 0, .work_us = 100 * 1000 };
        CHECK(simhipLaunchKernel(busy, add_kernel, &other)); /* touches nothing */
        munmap(slab, LEN); /* forgot hipHostUnregister */
        errno = 0;
        int *again = mmap(slab, LEN, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        if (again != slab) {
            fprintf(stderr, "round %d: mmap(MAP_FIXED_NOREPLACE) at the unmapped slab failed: %s\n",
                    round, again == MAP_FAILED ? strerror(errno) : "placed elsewhere");
            return 1;
        }
        for (int i = 0; i < NI; i++) {
            if (slab[i] != 0) {
                fprintf(stderr, "round %d: new slab not zero at %d\n", round, i);
                (*legacy_failures())++;
                break;
            }
        }
    }
    munmap(slab, LEN);
    CHECK(hipStreamDestroy(busy));
    CHECK(hipStreamDestroy(s));
    return legacy_finish();
}
