/*
 * cuda_abi.h - the part of the CUDA driver ABI that safepin uses, declared
 * by safepin itself: the driver API is plain C with a stable ABI, and the
 * library must build on machines without NVIDIA's toolkit. Values and
 * signatures follow CUDA 12/13's cuda.h; types carry an sp_ prefix so that
 * nothing clashes with a program's or a test's own declarations.
 */
#ifndef SAFEPIN_CUDA_ABI_H
#define SAFEPIN_CUDA_ABI_H

#include <stddef.h>
#include <stdint.h>

typedef int sp_CUresult;
typedef unsigned long long sp_CUdeviceptr; /* CUdeviceptr_v2 */
typedef int sp_CUdevice;
typedef void *sp_CUcontext;
typedef void *sp_CUstream;
typedef void *sp_CUevent;
typedef void *sp_CUgraph;
typedef void (*sp_CUhostFn)(void *userData);
typedef void (*sp_CUstreamCallback)(sp_CUstream hStream, sp_CUresult status, void *userData);

enum {
    SP_CUDA_SUCCESS = 0,
    SP_CUDA_ERROR_INVALID_VALUE = 1,
    SP_CUDA_ERROR_OUT_OF_MEMORY = 2,
    SP_CUDA_ERROR_NOT_INITIALIZED = 3,
    SP_CUDA_ERROR_DEINITIALIZED = 4,
    SP_CUDA_ERROR_NOT_FOUND = 500,
    SP_CUDA_ERROR_NOT_READY = 600,
    SP_CUDA_ERROR_ILLEGAL_ADDRESS = 700,
    SP_CUDA_ERROR_LAUNCH_TIMEOUT = 702,
    SP_CUDA_ERROR_ASSERT = 710,
    SP_CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 712,
    SP_CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED = 713,
    SP_CUDA_ERROR_LAUNCH_FAILED = 719,
    SP_CUDA_ERROR_NOT_PERMITTED = 800,
    SP_CUDA_ERROR_NOT_SUPPORTED = 801,
    SP_CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901,
    SP_CUDA_ERROR_UNKNOWN = 999,
};

#define SP_CU_STREAM_LEGACY ((sp_CUstream)0x1)
#define SP_CU_STREAM_PER_THREAD ((sp_CUstream)0x2)
enum { SP_CU_STREAM_NON_BLOCKING = 0x1 };
enum { SP_CU_EVENT_DISABLE_TIMING = 0x2 };
enum { SP_CU_STREAM_CAPTURE_MODE_GLOBAL = 0, SP_CU_STREAM_CAPTURE_MODE_RELAXED = 2 };
enum { SP_CU_STREAM_CAPTURE_STATUS_NONE = 0 };
enum {
    SP_CU_POINTER_ATTRIBUTE_CONTEXT = 1,
    SP_CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
    SP_CU_POINTER_ATTRIBUTE_DEVICE_POINTER = 3,
    SP_CU_POINTER_ATTRIBUTE_HOST_POINTER = 4,
};
enum { SP_CU_MEMORYTYPE_HOST = 1, SP_CU_MEMORYTYPE_DEVICE = 2 };
/* cuGetProcAddress flags: bit 1 asks for the per-thread-default-stream form. */
enum { SP_CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM = 1 << 1 };

#endif
