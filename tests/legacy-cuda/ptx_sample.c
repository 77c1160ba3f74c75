/*
 * ptx_sample.c - a CUDA driver-API program written the way NVIDIA's samples
 * are (vectorAddDrv, simpleZeroCopy), not to this project's conventions: the
 * kernel is a PTX string loaded with cuModuleLoadData, launched with
 * cuLaunchKernel on a created stream, reading host memory through a mapped
 * registration, timed with events, verified on the host. It includes
 * <cuda.h> and links with -lcuda; built against NVIDIA's header or the
 * tests' stand-in (tests/legacy-cuda/include/cuda.h), it calls the same
 * symbols. On simcuda the kernel's body comes from SIMCUDA_KERNELS
 * (kernels/vector_add.c). Prints OK and exits 0 when every result is right.
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *ptx =
    ".version 8.0\n"
    ".target sm_90\n"
    ".address_size 64\n"
    "\n"
    ".visible .entry VecAdd_kernel(\n"
    "    .param .u64 VecAdd_kernel_param_0,\n"
    "    .param .u64 VecAdd_kernel_param_1,\n"
    "    .param .u64 VecAdd_kernel_param_2,\n"
    "    .param .u32 VecAdd_kernel_param_3\n"
    ")\n"
    "{\n"
    "    .reg .pred %p<2>;\n"
    "    .reg .f32 %f<4>;\n"
    "    .reg .b32 %r<6>;\n"
    "    .reg .b64 %rd<11>;\n"
    "    ld.param.u64 %rd1, [VecAdd_kernel_param_0];\n"
    "    ld.param.u64 %rd2, [VecAdd_kernel_param_1];\n"
    "    ld.param.u64 %rd3, [VecAdd_kernel_param_2];\n"
    "    ld.param.u32 %r2, [VecAdd_kernel_param_3];\n"
    "    mov.u32 %r3, %ctaid.x;\n"
    "    mov.u32 %r4, %ntid.x;\n"
    "    mov.u32 %r5, %tid.x;\n"
    "    mad.lo.s32 %r1, %r3, %r4, %r5;\n"
    "    setp.ge.s32 %p1, %r1, %r2;\n"
    "    @%p1 bra $L__BB0_2;\n"
    "    cvta.to.global.u64 %rd4, %rd1;\n"
    "    mul.wide.s32 %rd5, %r1, 4;\n"
    "    add.s64 %rd6, %rd4, %rd5;\n"
    "    cvta.to.global.u64 %rd7, %rd2;\n"
    "    add.s64 %rd8, %rd7, %rd5;\n"
    "    ld.global.f32 %f1, [%rd8];\n"
    "    ld.global.f32 %f2, [%rd6];\n"
    "    add.f32 %f3, %f2, %f1;\n"
    "    cvta.to.global.u64 %rd9, %rd3;\n"
    "    add.s64 %rd10, %rd9, %rd5;\n"
    "    st.global.f32 [%rd10], %f3;\n"
    "$L__BB0_2:\n"
    "    ret;\n"
    "}\n";

#define checkCudaErrors(call)                                                           \
    do {                                                                                \
        CUresult err_ = (call);                                                         \
        if (err_ != CUDA_SUCCESS) {                                                     \
            const char *name_ = NULL;                                                   \
            cuGetErrorName(err_, &name_);                                               \
            fprintf(stderr, "%s:%d: %s failed: %s (%d)\n", __FILE__, __LINE__, #call,  \
                    name_ ? name_ : "?", (int)err_);                                    \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

int main(void)
{
    const int N = 4096;
    const size_t bytes = N * sizeof(float);
    CUdevice cuDevice;
    CUcontext cuContext;
    CUmodule cuModule;
    CUfunction vecAdd;
    char name[256];
    int major = 0, minor = 0, canMap = 0;

    checkCudaErrors(cuInit(0));
    checkCudaErrors(cuDeviceGet(&cuDevice, 0));
    checkCudaErrors(cuDeviceGetName(name, sizeof name, cuDevice));
    checkCudaErrors(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, cuDevice));
    checkCudaErrors(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, cuDevice));
    checkCudaErrors(cuDeviceGetAttribute(&canMap, CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, cuDevice));
    printf("> Using device 0: %s (SM %d.%d)\n", name, major, minor);
    if (!canMap) {
        fprintf(stderr, "device cannot map host memory\n");
        return 1;
    }
    checkCudaErrors(cuDevicePrimaryCtxRetain(&cuContext, cuDevice));
    checkCudaErrors(cuCtxPushCurrent(cuContext));

    size_t freeMem = 0, totalMem = 0;
    checkCudaErrors(cuMemGetInfo(&freeMem, &totalMem));
    printf("> %zu MiB free of %zu MiB\n", freeMem >> 20, totalMem >> 20);

    checkCudaErrors(cuModuleLoadData(&cuModule, ptx));
    checkCudaErrors(cuModuleGetFunction(&vecAdd, cuModule, "VecAdd_kernel"));

    /* Host inputs, page-aligned, registered and mapped (zero copy). */
    float *h_A, *h_B, *h_C;
    if (posix_memalign((void **)&h_A, 4096, bytes) || posix_memalign((void **)&h_B, 4096, bytes)) {
        fprintf(stderr, "out of host memory\n");
        return 1;
    }
    checkCudaErrors(cuMemAllocHost((void **)&h_C, bytes));
    for (int i = 0; i < N; i++) {
        h_A[i] = (float)i * 0.5f;
        h_B[i] = (float)(N - i);
    }
    memset(h_C, 0, bytes);
    checkCudaErrors(cuMemHostRegister(h_A, bytes, CU_MEMHOSTREGISTER_DEVICEMAP));
    checkCudaErrors(cuMemHostRegister(h_B, bytes, CU_MEMHOSTREGISTER_DEVICEMAP));
    CUdeviceptr d_A, d_B, d_C;
    checkCudaErrors(cuMemHostGetDevicePointer(&d_A, h_A, 0));
    checkCudaErrors(cuMemHostGetDevicePointer(&d_B, h_B, 0));
    checkCudaErrors(cuMemAlloc(&d_C, bytes));
    checkCudaErrors(cuMemsetD32(d_C, 0, N));

    CUstream stream;
    CUevent start, stop;
    int prio_least = 0, prio_greatest = 0;
    checkCudaErrors(cuCtxGetStreamPriorityRange(&prio_least, &prio_greatest));
    checkCudaErrors(cuStreamCreateWithPriority(&stream, CU_STREAM_NON_BLOCKING, prio_greatest));
    checkCudaErrors(cuEventCreate(&start, CU_EVENT_DEFAULT));
    checkCudaErrors(cuEventCreate(&stop, CU_EVENT_DEFAULT));

    int threadsPerBlock = 256;
    int blocksPerGrid = (N + threadsPerBlock - 1) / threadsPerBlock;
    int n = N;
    void *args[] = { &d_A, &d_B, &d_C, &n };
    checkCudaErrors(cuEventRecord(start, stream));
    checkCudaErrors(cuLaunchKernel(vecAdd, blocksPerGrid, 1, 1, threadsPerBlock, 1, 1, 0, stream,
                                   args, NULL));
    checkCudaErrors(cuMemcpyDtoHAsync(h_C, d_C, bytes, stream));
    checkCudaErrors(cuEventRecord(stop, stream));
    checkCudaErrors(cuEventSynchronize(stop));
    float ms = -1.0f;
    checkCudaErrors(cuEventElapsedTime(&ms, start, stop));
    printf("> kernel and copy: %.3f ms\n", ms);
    if (ms < 0.0f) {
        fprintf(stderr, "negative elapsed time\n");
        return 1;
    }

    int bad = 0;
    for (int i = 0; i < N; i++) {
        float want = h_A[i] + h_B[i];
        if (h_C[i] != want) {
            if (bad++ < 5)
                fprintf(stderr, "C[%d] = %f, expected %f\n", i, h_C[i], want);
        }
    }

    checkCudaErrors(cuEventDestroy(start));
    checkCudaErrors(cuEventDestroy(stop));
    checkCudaErrors(cuStreamDestroy(stream));
    checkCudaErrors(cuMemHostUnregister(h_A));
    checkCudaErrors(cuMemHostUnregister(h_B));
    checkCudaErrors(cuMemFree(d_C));
    checkCudaErrors(cuMemFreeHost(h_C));
    free(h_A);
    free(h_B);
    checkCudaErrors(cuModuleUnload(cuModule));
    checkCudaErrors(cuCtxPopCurrent(NULL));
    checkCudaErrors(cuDevicePrimaryCtxRelease(cuDevice));
    if (bad) {
        fprintf(stderr, "%d wrong results\n", bad);
        return 1;
    }
    printf("OK\n");
    return 0;
}
