/*
 * second_device - a registration used from a device the program switched
 * to after registering.
 *
 * Two devices (SIMHIP_DEVICES=2; the program sets it and re-executes
 * itself). The buffer is registered (mapped) while device 0 is current; the
 * program then switches to device 1, runs a slow kernel and a memset through
 * the mapped pointer on its per-thread default stream, unregisters, and only
 * then waits for the device.
 */
#include "legacy.h"

#define N (64 * 1024)

int main(int argc, char **argv)
{
    (void)argc;
    if (!getenv("SIMHIP_DEVICES")) {
        setenv("SIMHIP_DEVICES", "2", 1);
        execv("/proc/self/exe", argv);
        return 2;
    }
    int n = 0;
    CHECK(hipGetDeviceCount(&n));
    if (n < 2) {
        fprintf(stderr, "wanted 2 devices, got %d\n", n);
        return 2;
    }
    size_t bytes = N * sizeof(int);
    unsigned char *buf = aligned_alloc(4096, bytes);
    if (!buf)
        return 2;
    memset(buf, 0, bytes);
    CHECK(hipSetDevice(0));
    CHECK(hipHostRegister(buf, bytes, hipHostRegisterMapped));
    void *dbuf;
    CHECK(hipHostGetDevicePointer(&dbuf, buf, 0));

    CHECK(hipSetDevice(1));
    static struct kargs slow = { .n = 0, .work_us = 80000 };
    CHECK(simhipLaunchKernel(hipStreamPerThread, fill_kernel, &slow));
    CHECK(hipMemsetAsync(dbuf, 0x77, bytes, hipStreamPerThread));
    CHECK(hipHostUnregister(buf));
    CHECK(hipStreamSynchronize(hipStreamPerThread));
    for (size_t i = 0; i < bytes; i++)
        if (buf[i] != 0x77) {
            fprintf(stderr, "corrupted data at byte %zu: got 0x%02x, want 0x77\n", i, buf[i]);
            (*legacy_failures())++;
            break;
        }
    free(buf);
    return legacy_finish();
}
