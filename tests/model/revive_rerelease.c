/*
 * revive_rerelease - a range revived and released again while the reaper
 * holds it in its revive grace (found by the model, seed 9).
 *
 * A large range (>= revive_grace_bytes) is unregistered; the reaper takes it
 * into a batch and waits out the revive grace. Meanwhile the program
 * registers it again, identical (a revive), and unregisters it again. Before
 * the fix the reaper queued the range a second time when the grace ended
 * (once from the second unregister, once for its "new round"), which linked
 * it to itself: the reaper then looped forever holding the registry lock and
 * every later call, and exit, hung.
 *
 * Run under safepin with unregister=async:revive_grace_us=1000000 (run.sh):
 * the 100 ms pause puts the revive inside the grace; prints OK and exits 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <hip/hip_runtime_api.h>

#define N (2u << 20)

static int check(hipError_t e, hipError_t want, const char *what)
{
    if (e == want)
        return 0;
    fprintf(stderr, "%s returned %d, expected %d\n", what, (int)e, (int)want);
    return 1;
}

int main(void)
{
    unsigned char *buf = aligned_alloc(4096, N);
    unsigned char *small = aligned_alloc(4096, 4096);
    if (!buf || !small)
        return 2;
    memset(buf, 7, N);
    int bad = 0;
    bad |= check(hipHostRegister(buf, N, 0), hipSuccess, "hipHostRegister");
    bad |= check(hipHostUnregister(buf), hipSuccess, "hipHostUnregister");
    usleep(100 * 1000); /* the reaper is in the revive grace now */
    bad |= check(hipHostRegister(buf, N, 0), hipSuccess, "hipHostRegister (revive)");
    bad |= check(hipHostUnregister(buf), hipSuccess, "hipHostUnregister (again)");
    for (int i = 0; i < 3; i++) { /* the reaper must still serve releases */
        bad |= check(hipHostRegister(small, 4096, 0), hipSuccess, "hipHostRegister small");
        bad |= check(hipHostUnregister(small), hipSuccess, "hipHostUnregister small");
    }
    bad |= check(hipDeviceSynchronize(), hipSuccess, "hipDeviceSynchronize");
    for (size_t i = 0; i < N; i++)
        if (buf[i] != 7) {
            fprintf(stderr, "byte %zu changed\n", i);
            return 1;
        }
    free(buf);
    free(small);
    if (bad)
        return 1;
    printf("OK\n");
    return 0;
}
