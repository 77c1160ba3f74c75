/*
 * hip/hip_runtime_api.h (GPU build) - the HIP calls the legacy programs use,
 * mapped onto the CUDA runtime, so that the same HIP sources build for an
 * NVIDIA GPU with nvcc's cudart.
 *
 * Debian's ROCm 5.2.3 ships HIP's own nvidia_detail mapping, but it does not
 * compile against CUDA 13 (cudaMemAdvise/cudaMemPrefetchAsync now take a
 * cudaMemLocation, cudaDeviceProp lost fields, texture references are gone).
 * This header maps only what the programs call; the error codes they test
 * (1, 712, 713, 900, 901) are the same numbers in both APIs. Device
 * operations go through simhip_gpu.cu first (the op delay: see simhip.h).
 */
#ifndef SAFEPIN_GPU_HIP_RUNTIME_API_H
#define SAFEPIN_GPU_HIP_RUNTIME_API_H

#include <stdint.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef cudaError_t hipError_t;
typedef cudaStream_t hipStream_t;
typedef cudaGraph_t hipGraph_t;
typedef cudaGraphExec_t hipGraphExec_t;
typedef enum cudaStreamCaptureMode hipStreamCaptureMode;
typedef struct cudaPointerAttributes hipPointerAttribute_t;
typedef cudaStreamCallback_t hipStreamCallback_t;

#define hipSuccess cudaSuccess
#define hipErrorInvalidValue cudaErrorInvalidValue
#define hipErrorUnknown cudaErrorUnknown
#define hipErrorNotSupported cudaErrorNotSupported
#define hipErrorHostMemoryNotRegistered cudaErrorHostMemoryNotRegistered
#define hipErrorHostMemoryAlreadyRegistered cudaErrorHostMemoryAlreadyRegistered
#define hipErrorStreamCaptureUnsupported cudaErrorStreamCaptureUnsupported
#define hipErrorStreamCaptureInvalidated cudaErrorStreamCaptureInvalidated
#define hipHostRegisterDefault cudaHostRegisterDefault
#define hipHostRegisterMapped cudaHostRegisterMapped
#define hipHostRegisterPortable cudaHostRegisterPortable
#define hipStreamNonBlocking cudaStreamNonBlocking
#define hipStreamPerThread cudaStreamPerThread
#define hipStreamCaptureModeGlobal cudaStreamCaptureModeGlobal
#define hipStreamCaptureModeThreadLocal cudaStreamCaptureModeThreadLocal
#define hipStreamCaptureModeRelaxed cudaStreamCaptureModeRelaxed
#define hipMemcpyHostToDevice cudaMemcpyHostToDevice
#define hipMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define hipMemcpyDeviceToDevice cudaMemcpyDeviceToDevice
#define hipMemcpyHostToHost cudaMemcpyHostToHost

/* Enqueues the op delay (SIMHIP_OP_DELAY_US) ahead of a device operation. */
cudaError_t simhip_gpu_op_delay(cudaStream_t s);

#define hipGetErrorName cudaGetErrorName
#define hipGetErrorString cudaGetErrorString
#define hipSetDevice cudaSetDevice
#define hipGetDevice cudaGetDevice
#define hipGetDeviceCount cudaGetDeviceCount
/* A CUDA version (13000), not a HIP_VERSION: the one program that compares
 * it with a ROCm release (runtime_answers) is observed, not judged. */
#define hipRuntimeGetVersion cudaRuntimeGetVersion
#define hipDeviceSynchronize cudaDeviceSynchronize
#define hipMalloc cudaMalloc
#define hipFree cudaFree
#define hipHostRegister cudaHostRegister
#define hipHostUnregister cudaHostUnregister
#define hipHostGetDevicePointer cudaHostGetDevicePointer
#define hipHostGetFlags cudaHostGetFlags
#define hipHostFree cudaFreeHost
#define hipPointerGetAttributes cudaPointerGetAttributes
#define hipStreamCreate cudaStreamCreate
#define hipStreamCreateWithFlags cudaStreamCreateWithFlags
#define hipStreamDestroy cudaStreamDestroy
#define hipStreamSynchronize cudaStreamSynchronize
#define hipStreamQuery cudaStreamQuery
#define hipStreamAddCallback cudaStreamAddCallback
#define hipLaunchHostFunc cudaLaunchHostFunc
#define hipStreamBeginCapture cudaStreamBeginCapture
#define hipStreamEndCapture cudaStreamEndCapture
#define hipThreadExchangeStreamCaptureMode cudaThreadExchangeStreamCaptureMode
#define hipGraphLaunch cudaGraphLaunch
#define hipGraphDestroy cudaGraphDestroy
#define hipGraphExecDestroy cudaGraphExecDestroy
#define hipMemcpy cudaMemcpy

static inline hipError_t hipHostMalloc(void **p, size_t n, unsigned flags)
{
    return cudaHostAlloc(p, n, flags);
}

static inline hipError_t hipMemcpyAsync(void *dst, const void *src, size_t n,
                                        enum cudaMemcpyKind kind, hipStream_t s)
{
    hipError_t e = simhip_gpu_op_delay(s);
    return e ? e : cudaMemcpyAsync(dst, src, n, kind, s);
}

static inline hipError_t hipMemsetAsync(void *dst, int v, size_t n, hipStream_t s)
{
    hipError_t e = simhip_gpu_op_delay(s);
    return e ? e : cudaMemsetAsync(dst, v, n, s);
}

/* HIP keeps the pre-CUDA-12 form (error node and log buffer). */
static inline hipError_t hipGraphInstantiate(hipGraphExec_t *exec, hipGraph_t g, void *err_node,
                                             char *log, size_t log_size)
{
    (void)err_node, (void)log, (void)log_size;
    return cudaGraphInstantiate(exec, g, 0);
}

#ifdef __cplusplus
}
#endif
#endif
