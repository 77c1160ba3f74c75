/*
 * cuda.h - the test build's stand-in for NVIDIA's header (CI has no CUDA
 * toolkit): the project's own declarations of the driver API (cuda_min.h)
 * and the names cuda.h of CUDA 13 gives its entry points, so a program
 * written against NVIDIA's header compiles here unchanged and calls the
 * same exported symbols (cuMemHostRegister is cuMemHostRegister_v2, ...).
 * Only programs of the tests include it.
 */
#ifndef SAFEPIN_TEST_CUDA_H
#define SAFEPIN_TEST_CUDA_H

#include "cuda_min.h"

#define CUDA_VERSION 13000
#define CU_CTX_MAP_HOST 0x08

#define cuDeviceTotalMem cuDeviceTotalMem_v2
#define cuCtxCreate cuCtxCreate_v4
#define cuMemGetInfo cuMemGetInfo_v2
#define cuMemAlloc cuMemAlloc_v2
#define cuMemAllocPitch cuMemAllocPitch_v2
#define cuMemFree cuMemFree_v2
#define cuMemGetAddressRange cuMemGetAddressRange_v2
#define cuMemAllocHost cuMemAllocHost_v2
#define cuMemHostGetDevicePointer cuMemHostGetDevicePointer_v2
#define cuMemcpyHtoD cuMemcpyHtoD_v2
#define cuMemcpyDtoH cuMemcpyDtoH_v2
#define cuMemcpyDtoD cuMemcpyDtoD_v2
#define cuMemcpyHtoDAsync cuMemcpyHtoDAsync_v2
#define cuMemcpyDtoHAsync cuMemcpyDtoHAsync_v2
#define cuMemcpyDtoDAsync cuMemcpyDtoDAsync_v2
#define cuMemsetD8 cuMemsetD8_v2
#define cuMemsetD16 cuMemsetD16_v2
#define cuMemsetD32 cuMemsetD32_v2
#define cuCtxDestroy cuCtxDestroy_v2
#define cuCtxPopCurrent cuCtxPopCurrent_v2
#define cuCtxPushCurrent cuCtxPushCurrent_v2
#define cuStreamDestroy cuStreamDestroy_v2
#define cuEventDestroy cuEventDestroy_v2
#define cuMemHostRegister cuMemHostRegister_v2
#define cuStreamBeginCapture cuStreamBeginCapture_v2
#define cuDevicePrimaryCtxRelease cuDevicePrimaryCtxRelease_v2
#define cuDevicePrimaryCtxReset cuDevicePrimaryCtxReset_v2
#define cuDevicePrimaryCtxSetFlags cuDevicePrimaryCtxSetFlags_v2
#define cuDeviceGetUuid cuDeviceGetUuid_v2
#define cuGraphInstantiate cuGraphInstantiateWithFlags
#define cuGetProcAddress cuGetProcAddress_v2
#define cuEventElapsedTime cuEventElapsedTime_v2

#endif
