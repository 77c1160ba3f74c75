/*
 * cuda_answers.c - the driver's answers to bad or unusual arguments, which
 * programs test for: NULL or size 0, an unknown or stack pointer, an
 * interior pointer (the range keeps working), a double unregister,
 * cuMemFree_v2 of a registered host pointer, an overlapping register, NULL
 * outputs (passed through by safepin, with an api-error line).
 * No hazard on the bare driver (the codes are the H200's, DESIGN section 3):
 * the program checks that safepin gives the same codes (G10, G11).
 */
#include <sys/mman.h>

#include "legacy_cuda.h"

#define N 8192

static int fails;

static void busy_kernel(void *arg) { usleep(*(unsigned *)arg); }

static void expect(const char *what, CUresult got, CUresult want)
{
    if (got != want) {
        fprintf(stderr, "%s: got %s (%d), want %s (%d)\n", what, lc_name(got), (int)got,
                lc_name(want), (int)want);
        fails++;
    }
}

int main(void)
{
    lc_init();
    int *buf = mmap(NULL, N * sizeof(int), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buf == MAP_FAILED)
        return 2;
    int on_stack[16];
    CUstream s;
    CUdeviceptr d;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CHECK(cuMemAlloc_v2(&d, N * sizeof(int)));
    expect("register NULL", cuMemHostRegister_v2(NULL, 4096, 0), CUDA_ERROR_INVALID_VALUE);
    expect("register size 0", cuMemHostRegister_v2(buf, 0, 0), CUDA_ERROR_INVALID_VALUE);
    expect("unregister NULL", cuMemHostUnregister(NULL), CUDA_ERROR_INVALID_VALUE);
    expect("unregister a stack pointer", cuMemHostUnregister(on_stack),
           CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    CHECK(cuMemHostRegister_v2(buf, N * sizeof(int), 0));
    expect("overlapping register", cuMemHostRegister_v2(buf + N / 2, N * sizeof(int) / 2, 0),
           CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    expect("unregister an interior pointer", cuMemHostUnregister(buf + 100), CUDA_ERROR_INVALID_VALUE);
    expect("cuMemFree_v2 of a registered host pointer", cuMemFree_v2((CUdeviceptr)(uintptr_t)buf),
           CUDA_ERROR_INVALID_VALUE);
    /* Still registered and working. */
    for (int i = 0; i < N; i++)
        buf[i] = lc_pattern((size_t)i, 4);
    CHECK(cuMemcpyHtoDAsync_v2(d, buf, N * sizeof(int), s));
    CHECK(cuStreamSynchronize(s));
    memset(buf, 0, N * sizeof(int));
    CHECK(cuMemcpyDtoHAsync_v2(buf, d, N * sizeof(int), s));
    CHECK(cuStreamSynchronize(s));
    if (!lc_verify("after the refused calls", buf, N, 4))
        fails++;
    unsigned type = 0;
    expect("attribute of the registered buffer",
           cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)buf),
           CUDA_SUCCESS);
    /* A kernel on another stream keeps the device busy: under safepin the
     * release stays pending meanwhile (the driver's unregister waits for the
     * whole device), and the range is unregistered for the program all the
     * same: an interior pointer is then memory not registered (713). */
    static unsigned busy_us = 200000;
    CUstream other;
    CHECK(cuStreamCreate(&other, CU_STREAM_NON_BLOCKING));
    CHECK(simcudaLaunchKernel(other, busy_kernel, &busy_us));
    CHECK(cuMemHostUnregister(buf));
    expect("double unregister", cuMemHostUnregister(buf), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    expect("unregister an interior pointer after unregister", cuMemHostUnregister(buf + 100),
           CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    CHECK(cuStreamSynchronize(other));
    CHECK(cuStreamDestroy_v2(other));
    CUresult a = cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                       (CUdeviceptr)(uintptr_t)buf);
    expect("attribute after unregister", a, CUDA_ERROR_INVALID_VALUE);
    /* Calls safepin passes through (its api-error line names them). */
    expect("flags into NULL", cuMemHostGetFlags(NULL, buf), CUDA_ERROR_INVALID_VALUE);
    expect("stream into NULL", cuStreamCreate(NULL, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemFree_v2(d));
    CHECK(cuStreamDestroy_v2(s));
    munmap(buf, N * sizeof(int));
    if (fails)
        return 1;
    printf("OK\n");
    return 0;
}
