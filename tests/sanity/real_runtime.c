/*
 * real_runtime.c - a program built against Debian's real libamdhip64 (no
 * simhip header needed), run by tests/sanity/run.sh against the real
 * library (no device: it gets errors) and against simhip (it gets
 * hipSuccess). It prints every return code as "name=<code>" and exits 0
 * whatever the runtime answers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hip/hip_runtime_api.h>

#define SHOW(call)                                                     \
    do {                                                               \
        hipError_t e_ = (call);                                        \
        printf("%s=%d\n", #call, (int)e_);                             \
        fflush(stdout);                                                \
    } while (0)

static hipError_t register_unregister(void *p, size_t n)
{
    hipError_t e = hipHostRegister(p, n, hipHostRegisterDefault);
    if (e != hipSuccess)
        return e;
    return hipHostUnregister(p);
}

int main(void)
{
    int count = -1;
    hipError_t e = hipGetDeviceCount(&count);
    printf("hipGetDeviceCount=%d count=%d\n", (int)e, count);

    size_t n = 1 << 20;
    char *buf = malloc(n);
    if (!buf)
        return 0;
    memset(buf, 1, n);
    SHOW(hipHostRegister(buf, n, hipHostRegisterDefault));
    hipPointerAttribute_t attr;
    memset(&attr, 0, sizeof attr);
    SHOW(hipPointerGetAttributes(&attr, buf));
    printf("attr.memoryType=%d\n", (int)attr.memoryType);
    void *dev = NULL;
    SHOW(hipHostGetDevicePointer(&dev, buf, 0));
    printf("devptr_is_identity=%d\n", dev == (void *)buf);
    SHOW(hipHostUnregister(buf));
    SHOW(hipHostUnregister(buf));
    SHOW(register_unregister(buf, n));

    hipStream_t s = NULL;
    e = hipStreamCreate(&s);
    printf("hipStreamCreate=%d\n", (int)e);
    if (e == hipSuccess) {
        SHOW(hipStreamQuery(s));
        SHOW(hipStreamSynchronize(s));
        hipEvent_t ev;
        if (hipEventCreate(&ev) == hipSuccess) {
            SHOW(hipEventRecord(ev, s));
            SHOW(hipEventSynchronize(ev));
            SHOW(hipEventDestroy(ev));
        }
        SHOW(hipStreamDestroy(s));
    }
    SHOW(hipDeviceSynchronize());
    free(buf);
    printf("done\n");
    return 0;
}
