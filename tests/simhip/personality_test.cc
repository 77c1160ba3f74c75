// personality_test.cc - what distinguishes the rocm7 personality (ROCm 7.x,
// DESIGN section 3) from current and legacy, besides capture (see
// capture_test.cc): the runtime version, the 6.x memory-type values of
// hipPointerGetAttributes, and 712 for a register whose base lies inside a
// registered range. Each case runs in a fresh child with its personality.
#include <string.h>

#include "sim_common.h"

static int runtime_version()
{
    int v = -1;
    return hipRuntimeGetVersion(&v) == hipSuccess ? v : -1;
}

TEST(Personality, RuntimeVersionMatchesTheAbi)
{
    IN_CHILD_WITH_ENV("SIMHIP_PERSONALITY", "legacy", {
        CHILD_CHECK(runtime_version() == 50221153); // Debian's 5.2.3
    });
    IN_CHILD_WITH_ENV("SIMHIP_PERSONALITY", "current", {
        int v = runtime_version();
        CHILD_CHECK(v >= 50000000 && v < 60000000); // the 5.x ABI
    });
    IN_CHILD_WITH_ENV("SIMHIP_PERSONALITY", "rocm7", {
        CHILD_CHECK(runtime_version() >= 70200000);
        CHILD_CHECK(hipRuntimeGetVersion(nullptr) == hipErrorInvalidValue);
    });
}

// 6.x values: unregistered 0, host 1, device 2 (5.x: host 0, device 1).
TEST(Personality, Rocm7AttributesUse6xMemoryTypes)
{
    IN_CHILD_WITH_ENV("SIMHIP_PERSONALITY", "rocm7", {
        int local = 0;
        hipPointerAttribute_t a;
        memset(&a, 0x5a, sizeof a);
        CHILD_CHECK(hipPointerGetAttributes(&a, &local) == hipSuccess);
        CHILD_CHECK((int)a.memoryType == 0 && a.device == -1 && !a.hostPointer &&
                    !a.devicePointer);
        char *p = map_pages(1);
        CHILD_CHECK(hipHostRegister(p, page(), 0) == hipSuccess);
        CHILD_CHECK(hipPointerGetAttributes(&a, p + 8) == hipSuccess);
        CHILD_CHECK((int)a.memoryType == 1 && a.hostPointer == p + 8);
        CHILD_CHECK(hipHostUnregister(p) == hipSuccess);
        void *d = nullptr, *h = nullptr;
        CHILD_CHECK(hipMalloc(&d, 64) == hipSuccess);
        CHILD_CHECK(hipPointerGetAttributes(&a, d) == hipSuccess);
        CHILD_CHECK((int)a.memoryType == 2 && a.devicePointer == d);
        CHILD_CHECK(hipHostMalloc(&h, 64, 0) == hipSuccess);
        CHILD_CHECK(hipPointerGetAttributes(&a, h) == hipSuccess);
        CHILD_CHECK((int)a.memoryType == 1);
        CHILD_CHECK(hipFree(d) == hipSuccess && hipHostFree(h) == hipSuccess);
        munmap(p, page());
    });
    IN_CHILD_WITH_ENV("SIMHIP_PERSONALITY", "current", {
        void *d = nullptr;
        hipPointerAttribute_t a;
        CHILD_CHECK(hipMalloc(&d, 64) == hipSuccess);
        CHILD_CHECK(hipPointerGetAttributes(&a, d) == hipSuccess);
        CHILD_CHECK(a.memoryType == hipMemoryTypeDevice && (int)a.memoryType == 1);
        CHILD_CHECK(hipFree(d) == hipSuccess);
    });
}

// Newer clr looks the new base up: inside a registered range (identical
// re-register included) it is 712 and the old registration is untouched;
// current answers hipSuccess and keeps the old object (its size too).
TEST(Personality, Rocm7RefusesRegisterInsideARegisteredRange)
{
    IN_CHILD_WITH_ENV("SIMHIP_PERSONALITY", "rocm7", {
        char *p = map_pages(4);
        CHILD_CHECK(hipHostRegister(p + page(), 2 * page(), 0) == hipSuccess);
        CHILD_CHECK(hipHostRegister(p + page(), 2 * page(), 0) ==
                    hipErrorHostMemoryAlreadyRegistered);
        CHILD_CHECK(hipHostRegister(p + 2 * page(), page(), 0) ==
                    hipErrorHostMemoryAlreadyRegistered);
        CHILD_CHECK(hipGetLastError() == hipErrorHostMemoryAlreadyRegistered);
        // Base below the range: not looked up, answered as before.
        CHILD_CHECK(hipHostRegister(p, 2 * page(), 0) == hipSuccess);
        unsigned flags = 9;
        CHILD_CHECK(hipHostGetFlags(&flags, p + page()) == hipSuccess && flags == 0);
        CHILD_CHECK(hipHostGetFlags(&flags, p) == hipErrorInvalidValue); // old object kept
        CHILD_CHECK(hipHostUnregister(p + page()) == hipSuccess);
        CHILD_CHECK(hipHostUnregister(p + page()) == hipErrorHostMemoryNotRegistered);
        munmap(p, 4 * page());
    });
    IN_CHILD_WITH_ENV("SIMHIP_PERSONALITY", "current", {
        char *p = map_pages(2);
        CHILD_CHECK(hipHostRegister(p, page(), 0) == hipSuccess);
        CHILD_CHECK(hipHostRegister(p, 2 * page(), 0) == hipSuccess); // old size kept
        unsigned flags = 0;
        CHILD_CHECK(hipHostGetFlags(&flags, p + page()) == hipErrorInvalidValue);
        CHILD_CHECK(hipHostUnregister(p) == hipSuccess);
        munmap(p, 2 * page());
    });
}
