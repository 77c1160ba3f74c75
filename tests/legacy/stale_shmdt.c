/*
 * stale_shmdt - shmdt of a still-registered SysV shared-memory segment,
 * then a new, larger-pinned segment attached at the same address.
 *
 * A producer pins part of a SysV segment it shares with another process,
 * lets the device fill it, and detaches it without hipHostUnregister. The
 * next segment is attached at the same address and pinned in full;
 * registering "succeeds", but the runtime still holds the stale
 * registration of the old size: the kernel faults past it.
 */
#include <sys/ipc.h>
#include <sys/shm.h>
#include "legacy.h"

#define SEG_N (32 * 1024) /* 128 KiB segment */
#define OLD_N (16 * 1024) /* the first producer pins 64 KiB of it */
#define NEW_N SEG_N       /* the second pins all of it */

static int *attach(int *at, int *id)
{
    *id = shmget(IPC_PRIVATE, SEG_N * sizeof(int), IPC_CREAT | 0600);
    if (*id < 0) {
        perror("shmget");
        exit(2);
    }
    int *p = shmat(*id, at, 0);
    if (p == (void *)-1) {
        perror("shmat");
        shmctl(*id, IPC_RMID, NULL);
        exit(2);
    }
    shmctl(*id, IPC_RMID, NULL); /* goes away with its last detach */
    return p;
}

int main(void)
{
    static struct kargs args;
    hipStream_t stream;
    CHECK(hipStreamCreate(&stream));

    int id1, id2;
    int *seg = attach(NULL, &id1);
    CHECK(hipHostRegister(seg, OLD_N * sizeof(int), hipHostRegisterMapped));
    int *dseg;
    CHECK(hipHostGetDevicePointer((void **)&dseg, seg, 0));
    args = (struct kargs){ .dev = dseg, .n = OLD_N, .seed = 1 };
    CHECK(simhipLaunchKernel(stream, fill_kernel, &args));
    CHECK(hipStreamSynchronize(stream));
    legacy_verify("first segment", seg, OLD_N, 0, 1, 0);

    if (shmdt(seg) != 0) { /* forgot hipHostUnregister */
        perror("shmdt");
        return 1;
    }

    int *seg2 = attach(seg, &id2);
    legacy_fill(seg2, NEW_N, 0, 2);
    CHECK(hipHostRegister(seg2, NEW_N * sizeof(int), hipHostRegisterMapped));
    CHECK(hipHostGetDevicePointer((void **)&dseg, seg2, 0));
    args = (struct kargs){ .dev = dseg, .n = NEW_N, .add = 5 };
    CHECK(simhipLaunchKernel(stream, add_kernel, &args));
    CHECK(hipStreamSynchronize(stream));
    legacy_verify("second segment", seg2, NEW_N, 0, 2, 5);

    CHECK(hipHostUnregister(seg2));
    if (shmdt(seg2) != 0) {
        perror("shmdt");
        return 1;
    }
    CHECK(hipStreamDestroy(stream));
    return legacy_finish();
}
