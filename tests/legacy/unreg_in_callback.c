/*
 * unreg_in_callback - hipHostUnregister from a host callback.
 *
 * A program pins an input buffer, runs a kernel on it on the null stream and
 * enqueues a completion callback that checks the result and unpins the
 * buffer ("clean up as soon as the GPU is done with it"). hipHostUnregister
 * waits for the device, including the very stream that is running the
 * callback: a deadlock.
 */
#include <stdatomic.h>
#include "legacy.h"

#define N (64 * 1024)

struct done_ctx {
    int *buf;
    atomic_int called;
    int data_ok;
    hipError_t unregister_err;
};

static void on_done(hipStream_t stream, hipError_t status, void *user)
{
    (void)stream;
    (void)status;
    struct done_ctx *ctx = user;
    ctx->data_ok = legacy_verify("buf (in callback)", ctx->buf, N, 0, 8, 4);
    ctx->unregister_err = hipHostUnregister(ctx->buf);
    atomic_store(&ctx->called, 1);
}

int main(void)
{
    int *buf = aligned_alloc(4096, N * sizeof(int));
    if (!buf)
        return 2;
    legacy_fill(buf, N, 0, 8);
    CHECK(hipHostRegister(buf, N * sizeof(int), hipHostRegisterMapped));
    int *dbuf;
    CHECK(hipHostGetDevicePointer((void **)&dbuf, buf, 0));

    static struct kargs args;
    static struct done_ctx ctx;
    ctx.buf = buf;
    args = (struct kargs){ .dev = dbuf, .n = N, .add = 4, .work_us = 10000 };
    CHECK(simhipLaunchKernel(0, add_kernel, &args));
    CHECK(hipStreamAddCallback(0, on_done, &ctx, 0));
    CHECK(hipDeviceSynchronize());

    if (!atomic_load(&ctx.called)) {
        fprintf(stderr, "callback did not run\n");
        return 1;
    }
    if (ctx.unregister_err != hipSuccess) {
        fprintf(stderr, "hipHostUnregister in callback returned %s (%d)\n",
                hipGetErrorName(ctx.unregister_err), (int)ctx.unregister_err);
        (*legacy_failures())++;
    }
    legacy_verify("buf", buf, N, 0, 8, 4);
    free(buf);
    return legacy_finish();
}
