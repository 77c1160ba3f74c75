/*
 * neighbour_free - free() of a small block that shares only an edge page
 * with a page-rounded registration.
 *
 * Pinning works on whole pages, so a library pins a small malloc'd buffer
 * with its length rounded up to the end of its page, [buf, page_up(buf +
 * n)). That page also holds other small blocks of the program, which it
 * frees as usual while the buffer stays pinned and in use. The
 * registration is the buffer's: it stays registered until the library
 * unregisters it. (The range starts at buf rather than page_down(buf):
 * the simulated device pins by touching each page's first byte, which an
 * ASan build may hold as a redzone. tests/unit/mem_test.cc covers the
 * page_down edge.)
 */
#include <stdint.h>
#include "legacy.h"

#define PAGE 4096
#define N 128 /* ints: a 512-byte buffer */
#define BLOCKS 64

static uintptr_t page_up(uintptr_t a) { return (a + PAGE - 1) & ~(uintptr_t)(PAGE - 1); }

int main(void)
{
    /* Small blocks of one size: allocators pack them into shared pages.
     * The buffer is one of them; its neighbour a later one in the
     * buffer's last page. */
    int *blocks[BLOCKS];
    int *buf = NULL, *neighbour = NULL;
    for (int i = 0; i < BLOCKS; i++)
        if (!(blocks[i] = malloc(N * sizeof(int))))
            return 2;
    for (int i = 0; i < BLOCKS && !buf; i++)
        for (int j = 0; j < BLOCKS && !buf; j++)
            if (blocks[j] >= blocks[i] + N &&
                (uintptr_t)blocks[j] < page_up((uintptr_t)(blocks[i] + N))) {
                buf = blocks[i];
                neighbour = blocks[j];
            }
    if (!buf) {
        fprintf(stderr, "no small block follows another in its last page\n");
        return 2;
    }

    void *base = buf;
    size_t len = page_up((uintptr_t)(buf + N)) - (uintptr_t)base;
    legacy_fill(buf, N, 0, 1);
    CHECK(hipHostRegister(base, len, hipHostRegisterMapped));
    char *dbase;
    CHECK(hipHostGetDevicePointer((void **)&dbase, base, 0));
    int *dbuf = (int *)(dbase + ((char *)buf - (char *)base));

    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    static struct kargs a;
    a = (struct kargs){ .dev = dbuf, .n = N, .add = 1 };
    CHECK(simhipLaunchKernel(s, add_kernel, &a));
    CHECK(hipStreamSynchronize(s));
    legacy_verify("buffer", buf, N, 0, 1, 1);

    free(neighbour); /* shares the buffer's page, nothing more */

    /* The buffer is still pinned: the device keeps using it. */
    a = (struct kargs){ .dev = dbuf, .n = N, .add = 2 };
    CHECK(simhipLaunchKernel(s, add_kernel, &a));
    CHECK(hipStreamSynchronize(s));
    legacy_verify("buffer after the neighbour's free", buf, N, 0, 1, 3);
    EXPECT_ERR(hipHostUnregister(base), hipSuccess);

    for (int i = 0; i < BLOCKS; i++)
        if (blocks[i] != neighbour)
            free(blocks[i]);
    CHECK(hipStreamDestroy(s));
    return legacy_finish();
}
