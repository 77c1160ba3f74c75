/*
 * unreg_free_reuse - unregister, free and reuse a block while a kernel that
 * uses it is still in flight.
 *
 * A batch loop: each batch mallocs an input block, pins it, launches a
 * reduction on a non-blocking stream (the kernel also uses its input as
 * scratch), then unpins and frees the block and goes on; the allocator hands
 * the next batch the same address. Results are collected at the end. With
 * ROCm 5.2-5.5 the unregister does not wait for the non-blocking stream: the
 * first kernel touches memory that is no longer pinned (GPU fault), or, on
 * real hardware, scribbles over the next batch's data.
 */
#include "legacy.h"

#define BATCHES 4
#define N (16 * 1024) /* 64 KiB of ints per batch */

struct reduce_args {
    const int *in;  /* device address of the batch */
    long long *out; /* device address of its result */
    size_t n;
    unsigned work_us;
};

/* out = sum(in); in[i] = -1 (the kernel reuses its input as scratch) */
static void reduce_kernel(void *p)
{
    const struct reduce_args *a = p;
    int tmp[LEGACY_CHUNK];
    long long sum = 0;
    usleep(a->work_us);
    for (size_t i = 0; i < a->n; i += LEGACY_CHUNK) {
        size_t m = a->n - i < LEGACY_CHUNK ? a->n - i : LEGACY_CHUNK;
        simhipDeviceRead(tmp, a->in + i, m * sizeof(int));
        for (size_t j = 0; j < m; j++) {
            sum += tmp[j];
            tmp[j] = -1;
        }
        simhipDeviceWrite((int *)a->in + i, tmp, m * sizeof(int));
    }
    simhipDeviceWrite(a->out, &sum, sizeof(sum));
}

int main(void)
{
    static long long results[BATCHES];
    static struct reduce_args args[BATCHES];
    long long expected[BATCHES];

    hipStream_t stream;
    CHECK(hipStreamCreateWithFlags(&stream, hipStreamNonBlocking));
    CHECK(hipHostRegister(results, sizeof(results), hipHostRegisterMapped));
    long long *dresults;
    CHECK(hipHostGetDevicePointer((void **)&dresults, results, 0));

    int *first_block = NULL;
    int reused = 0;
    for (int b = 0; b < BATCHES; b++) {
        int *in = malloc(N * sizeof(int));
        if (!in)
            return 2;
        if (!first_block)
            first_block = in;
        else if (in == first_block)
            reused++;
        legacy_fill(in, N, 0, 100 + b);
        expected[b] = 0;
        for (size_t i = 0; i < N; i++)
            expected[b] += in[i];

        CHECK(hipHostRegister(in, N * sizeof(int), hipHostRegisterMapped));
        int *din;
        CHECK(hipHostGetDevicePointer((void **)&din, in, 0));
        args[b] = (struct reduce_args){ din, dresults + b, N, 20000 };
        CHECK(simhipLaunchKernel(stream, reduce_kernel, &args[b]));

        CHECK(hipHostUnregister(in)); /* the kernel may not have run yet */
        free(in);
    }

    /* Host work meanwhile, in a block the allocator reuses. */
    int *other = malloc(N * sizeof(int));
    if (!other)
        return 2;
    legacy_fill(other, N, 0, 999);

    CHECK(hipStreamSynchronize(stream));

    for (int b = 0; b < BATCHES; b++)
        if (results[b] != expected[b]) {
            fprintf(stderr, "batch %d: wrong result %lld, want %lld\n", b,
                    results[b], expected[b]);
            (*legacy_failures())++;
        }
    legacy_verify("other", other, N, 0, 999, 0);
    printf("address reused by %d of %d later batches\n", reused, BATCHES - 1);

    CHECK(hipHostUnregister(results));
    CHECK(hipStreamDestroy(stream));
    free(other);
    return legacy_finish();
}
