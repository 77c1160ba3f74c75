/*
 * mapped_memset_loop.c - one thread, a loop over blocks of random sizes
 * (4 KiB to 1 MiB, from malloc, so that neighbouring blocks share pages):
 * each is pinned with cuMemHostRegister (DEVICEMAP), filled by the device
 * with cuMemsetD8Async through its mapped device pointer on a non-blocking
 * stream, and then, at random, one of
 *   (a) synchronize, check the bytes, unregister, free;
 *   (b) unregister and free with the memset still in flight;
 *   (c) synchronize, check, free while still registered;
 *   (d) synchronize, check, realloc while still registered;
 *   (e) a nested identical register with the memset in flight (one
 *       component pins what another already pinned), synchronize, check,
 *       each unregistering its own.
 *
 * On the bare driver every check passes: (c) and (d) leak their
 * registrations, a later block landing on a leaked one is refused with 712
 * and set aside (kept until the end, so that malloc hands out other
 * memory), and (e)'s nested register is refused with 712. A library
 * that releases registrations later, on another thread, must never leave
 * a live registration's page unpinned (a neighbour's release sharing the
 * page): the device's bytes would land in pages the process does not see,
 * and the check after the synchronize would read zeros.
 */
#include <stdint.h>

#include "legacy_cuda.h"

#define ITERATIONS 400
#define MIN_SIZE (4u * 1024)
#define MAX_SIZE (1024u * 1024)

static void *aside[ITERATIONS];
static int naside;

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

static size_t random_size(void)
{
    return MIN_SIZE + next() % (MAX_SIZE - MIN_SIZE + 1);
}

/* 1 when every byte of p is v; otherwise report the first one that is not. */
static int check_bytes(int iter, char op, const unsigned char *p, size_t n, unsigned char v)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] != v) {
            fprintf(stderr,
                    "iteration %d (%c), block %p of %zu bytes: byte %zu is 0x%02x, expected "
                    "0x%02x\n",
                    iter, op, (void *)p, n, i, p[i], v);
            return 0;
        }
    }
    return 1;
}

int main(void)
{
    lc_init();
    CUstream s;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    int bad = 0, skipped = 0;
    for (int iter = 0; iter < ITERATIONS && !bad; iter++) {
        size_t n = random_size();
        unsigned char v = (unsigned char)(1 + next() % 255);
        char op = (char)('a' + next() % 5);
        unsigned char *p = malloc(n);
        if (!p)
            return 2;
        memset(p, 0, n);
        CUresult r = cuMemHostRegister_v2(p, n, CU_MEMHOSTREGISTER_DEVICEMAP);
        if (r == CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED) {
            /* A block this program freed while registered still holds
             * these bytes (the bare driver). */
            skipped++;
            aside[naside++] = p;
            continue;
        }
        CHECK(r);
        CUdeviceptr d;
        CHECK(cuMemHostGetDevicePointer_v2(&d, p, 0));
        CHECK(cuMemsetD8Async(d, v, n, s));
        if (op == 'b') {
            CHECK(cuMemHostUnregister(p));
            free(p);
            continue;
        }
        int nested = 0;
        if (op == 'e') {
            r = cuMemHostRegister_v2(p, n, CU_MEMHOSTREGISTER_DEVICEMAP);
            if (r != CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED)
                CHECK(r);
            nested = r == CUDA_SUCCESS;
        }
        CHECK(cuStreamSynchronize(s));
        if (!check_bytes(iter, op, p, n, v))
            bad = 1;
        switch (op) {
        case 'a':
        case 'e':
            if (nested)
                CHECK(cuMemHostUnregister(p));
            CHECK(cuMemHostUnregister(p));
            free(p);
            break;
        case 'c':
            free(p); /* still registered */
            break;
        case 'd': {
            size_t m = random_size();
            unsigned char *q = realloc(p, m); /* still registered */
            if (!q)
                return 2;
            memset(q, 0x5a, m);
            free(q);
            break;
        }
        }
    }
    CHECK(cuStreamSynchronize(s));
    CHECK(cuStreamDestroy_v2(s));
    for (int i = 0; i < naside; i++)
        free(aside[i]);
    if (bad)
        return 1;
    printf("%d iterations (%d set aside: already registered)\nOK\n", ITERATIONS, skipped);
    return 0;
}
