/*
 * fixed_map_in_callback - mmap(MAP_FIXED) from a host callback over pinned
 * memory: still registered, unregistered, and just unmapped.
 *
 * A pipeline recycles its staging windows from the completion callback of
 * the batch that used them: the window is replaced in place by a fresh
 * mapping (MAP_FIXED), whatever became of its registration; one window is
 * first unmapped there (and mapped again at once). Without safepin the
 * callback maps at once and the program goes on. A tool that made the
 * callback wait for the window's release would wait behind the callback
 * itself: the stream never finishes.
 */
#include <errno.h>
#include <sys/mman.h>
#include "legacy.h"

#define PAGES 8
#define WIN_N (PAGES * 4096 / (int)sizeof(int))

struct windows {
    int *live, *unregistered, *unmapped;
    int remapped;
    int err;
};

static int *map_window(void)
{
    void *p = mmap(NULL, PAGES * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        exit(2);
    }
    return p;
}

static int remap_fixed(int *w)
{
    void *p = mmap(w, PAGES * 4096, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    return p == (void *)w ? 0 : (p == MAP_FAILED ? errno : -1);
}

static void recycle(hipStream_t stream, hipError_t status, void *user)
{
    (void)stream;
    (void)status;
    struct windows *w = user;
    int e;
    munmap(w->unmapped, PAGES * 4096); /* forgetting its registration */
    if ((e = remap_fixed(w->live)) || (e = remap_fixed(w->unregistered)) ||
        (e = remap_fixed(w->unmapped)))
        w->err = e;
    else
        w->remapped = 1;
}

static void use_window(hipStream_t s, int *w, int seed)
{
    static struct kargs args[6];
    static int next;
    int *d;
    legacy_fill(w, WIN_N, 0, seed);
    CHECK(hipHostRegister(w, PAGES * 4096, hipHostRegisterMapped));
    CHECK(hipHostGetDevicePointer((void **)&d, w, 0));
    struct kargs *a = &args[next++];
    *a = (struct kargs){ .dev = d, .n = WIN_N, .add = 1 };
    CHECK(simhipLaunchKernel(s, add_kernel, a));
}

int main(void)
{
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    static struct windows w;
    w.live = map_window();
    w.unregistered = map_window();
    w.unmapped = map_window();

    use_window(s, w.live, 1);
    use_window(s, w.unregistered, 2);
    use_window(s, w.unmapped, 3);
    CHECK(hipStreamSynchronize(s));
    legacy_verify("live window", w.live, WIN_N, 0, 1, 1);
    legacy_verify("unregistered window", w.unregistered, WIN_N, 0, 2, 1);
    legacy_verify("unmapped window", w.unmapped, WIN_N, 0, 3, 1);

    /* The batch is done: one window stays registered (forgotten), one is
     * unregistered, one is unmapped in the callback. */
    CHECK(hipHostUnregister(w.unregistered));
    CHECK(hipStreamAddCallback(s, recycle, &w, 0));
    CHECK(hipStreamSynchronize(s));
    if (!w.remapped) {
        fprintf(stderr, "the callback's mmap(MAP_FIXED) failed: %d\n", w.err);
        return 1;
    }

    /* Fresh windows: zero, and ours to keep. */
    int *wins[3] = { w.live, w.unregistered, w.unmapped };
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < WIN_N; j++) {
            if (wins[i][j] != 0) {
                fprintf(stderr, "window %d: fresh mapping not zero at %d: %d\n", i, j, wins[i][j]);
                (*legacy_failures())++;
                break;
            }
        }
        legacy_fill(wins[i], WIN_N, 0, 10 + i);
    }
    /* Registering the fresh windows waits for whatever is still pending on
     * them; what is pending must never touch the new mappings. */
    for (int i = 0; i < 3; i++)
        use_window(s, wins[i], 20 + i);
    CHECK(hipStreamSynchronize(s));
    for (int i = 0; i < 3; i++) {
        legacy_verify("reused window", wins[i], WIN_N, 0, 20 + i, 1);
        CHECK(hipHostUnregister(wins[i]));
        munmap(wins[i], PAGES * 4096);
    }
    CHECK(hipStreamDestroy(s));
    return legacy_finish();
}
