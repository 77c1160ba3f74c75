/*
 * two_dev_launches - an unregister on device 0's thread while device 1
 * runs a long kernel that uses the registration (made while device 0 was
 * current, used through the mapped pointer); meanwhile another thread
 * launches work on both devices, and must not stall.
 *
 * The long kernel waits for a doorbell (host memory it polls) before it
 * fills the buffer, so "meanwhile" needs no timing: the main thread rings
 * it once the other thread's work on both devices has completed, or after
 * 3 s, saying "stalled: ...". The unregistering thread then reads the
 * kernel's result at once (ROCm 5.6+ waits for the device in unregister).
 */
#include "two_devices.h"

static int *doorbell;
static int *buf;
static atomic_int in_unregister, launched;

/* legacy.h's fill, once the doorbell rings. */
static void doorbell_fill_kernel(void *p)
{
    int v = 0;
    for (;;) {
        simhipDeviceRead(&v, doorbell, sizeof v);
        if (v)
            break;
        usleep(500);
    }
    fill_kernel(p);
}

static void *unregisterer(void *arg)
{
    (void)arg;
    CHECK(hipSetDevice(0));
    atomic_store(&in_unregister, 1);
    CHECK(hipHostUnregister(buf)); /* device 1 still busy */
    legacy_verify("right after hipHostUnregister", buf, TD_N, 0, 47, 0);
    free(buf);
    return NULL;
}

#define OWN_N 1024

static int *own[2];
static hipStream_t own_s[2];

/* On each device: a stream, a registration of its own, a kernel on it. */
static void *launcher(void *arg)
{
    (void)arg;
    for (int d = 0; d < 2; d++) {
        CHECK(hipSetDevice(d));
        CHECK(hipStreamCreateWithFlags(&own_s[d], hipStreamNonBlocking));
        own[d] = aligned_alloc(4096, OWN_N * sizeof(int));
        if (!own[d])
            exit(2);
        CHECK(hipHostRegister(own[d], OWN_N * sizeof(int), hipHostRegisterMapped));
        static struct kargs k[2];
        k[d] = (struct kargs){ .n = OWN_N, .seed = 50 + d };
        CHECK(hipHostGetDevicePointer((void **)&k[d].dev, own[d], 0));
        CHECK(simhipLaunchKernel(own_s[d], fill_kernel, &k[d]));
        CHECK(hipStreamSynchronize(own_s[d]));
        legacy_verify("the other thread's kernel", own[d], OWN_N, 0, 50 + d, 0);
    }
    atomic_store(&launched, 1);
    return NULL;
}

int main(int argc, char **argv)
{
    (void)argc;
    td_two_devices(argv);
    CHECK(hipSetDevice(0));
    CHECK(hipHostMalloc((void **)&doorbell, sizeof(int), hipHostMallocPortable));
    __atomic_store_n(doorbell, 0, __ATOMIC_RELEASE);
    size_t bytes = TD_N * sizeof(int);
    buf = aligned_alloc(4096, bytes);
    if (!buf)
        return 2;
    memset(buf, 0, bytes);
    CHECK(hipHostRegister(buf, bytes, hipHostRegisterPortable | hipHostRegisterMapped));
    static struct kargs fill = { .n = TD_N, .seed = 47 };
    CHECK(hipHostGetDevicePointer((void **)&fill.dev, buf, 0));

    CHECK(hipSetDevice(1));
    hipStream_t s1;
    CHECK(hipStreamCreateWithFlags(&s1, hipStreamNonBlocking));
    CHECK(simhipLaunchKernel(s1, doorbell_fill_kernel, &fill));
    CHECK(hipSetDevice(0));

    pthread_t u, l;
    pthread_create(&u, NULL, unregisterer, NULL);
    while (!atomic_load(&in_unregister))
        usleep(1000);
    usleep(20000); /* let it get inside the unregister */
    pthread_create(&l, NULL, launcher, NULL);
    int stalled = 1;
    for (int i = 0; i < 3000; i++) {
        if (atomic_load(&launched)) {
            stalled = 0;
            break;
        }
        usleep(1000);
    }
    if (stalled)
        fprintf(stderr, "stalled: another thread's work on devices 0 and 1 did not complete "
                        "within 3 s while an unregister waited for device 1; ringing the "
                        "doorbell\n");
    __atomic_store_n(doorbell, 1, __ATOMIC_RELEASE);
    pthread_join(l, NULL);
    pthread_join(u, NULL);

    CHECK(hipSetDevice(1));
    CHECK(hipStreamSynchronize(s1));
    CHECK(hipStreamDestroy(s1));
    for (int d = 0; d < 2; d++) {
        CHECK(hipSetDevice(d));
        CHECK(hipHostUnregister(own[d]));
        CHECK(hipStreamDestroy(own_s[d]));
        free(own[d]);
    }
    CHECK(hipSetDevice(0));
    CHECK(hipHostFree(doorbell));
    if (stalled)
        (*legacy_failures())++;
    return legacy_finish();
}
