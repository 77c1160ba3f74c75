/* free of a 2 MiB registered-then-unregistered block (in its revive grace)
 * while a destroyed non-blocking stream still has a host function pending
 * that waits for a flag the program sets after the free. Bare: free never
 * waits for the device. */
#include "legacy.h"
static int flag;
int main(void)
{
    char *a = legacy_grace_block(2u << 20);
    if (!a)
        return 1;
    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    CHECK(hipStreamAddCallback(s, legacy_wait_flag, &flag, 0));
    CHECK(hipStreamDestroy(s));
    free(a); /* in its grace */
    __atomic_store_n(&flag, 1, __ATOMIC_RELEASE);
    CHECK(hipDeviceSynchronize());
    printf("OK\n");
    return 0;
}
