/*
 * device.c - what a program asks of its devices: names, attributes, memory
 * size and what is free, compute capability, UUID, peer access, stream
 * priorities. Every simulated device is an H200 (141 GiB, 132 SMs, compute
 * capability 9.0) as far as these answers go; nothing in the model depends
 * on them.
 */
#include <stdio.h>
#include <string.h>

#include "sc_internal.h"

#define SC_TOTAL_MEM ((size_t)143771 << 20)

static CUresult enter_dev(CUdevice dev)
{
    CUresult e = sc_enter(false);
    if (e != CUDA_SUCCESS)
        return e;
    return dev < 0 || dev >= sh_cfg.ndevices ? CUDA_ERROR_INVALID_DEVICE : CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
    CUresult e = enter_dev(dev);
    if (e != CUDA_SUCCESS)
        return e;
    if (!name || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    snprintf(name, (size_t)len, "simcuda H200 (simulated)");
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute a, CUdevice dev)
{
    CUresult e = enter_dev(dev);
    if (e != CUDA_SUCCESS)
        return e;
    if (!pi || a <= 0 || a > 150)
        return CUDA_ERROR_INVALID_VALUE;
    int v;
    switch (a) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: v = 64; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: v = 0x7fffffff; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: v = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: v = 48 << 10; break;
    case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: v = 64 << 10; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: v = 32; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: v = 65536; break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: v = 1980000; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: v = 132; break;
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: v = 0x18 + dev; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: v = 2619000; break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: v = 6144; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: v = 50 << 20; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: v = 2048; break;
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: v = 3; break;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: v = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: v = 0; break;
    case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS: v = 0; break; /* H200: no HMM */
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: v = 227 << 10; break;
    case CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED: v = 1; break;
    default: v = 0; break;
    }
    *pi = v;
    return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    CUresult e = enter_dev(dev);
    if (e != CUDA_SUCCESS)
        return e;
    if (!bytes)
        return CUDA_ERROR_INVALID_VALUE;
    *bytes = SC_TOTAL_MEM;
    return CUDA_SUCCESS;
}

CUresult cuDeviceComputeCapability(int *major, int *minor, CUdevice dev)
{
    CUresult e = enter_dev(dev);
    if (e != CUDA_SUCCESS)
        return e;
    if (!major || !minor)
        return CUDA_ERROR_INVALID_VALUE;
    *major = 9;
    *minor = 0;
    return CUDA_SUCCESS;
}

/* A fixed UUID per ordinal. */
CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
    CUresult e = enter_dev(dev);
    if (e != CUDA_SUCCESS)
        return e;
    if (!uuid)
        return CUDA_ERROR_INVALID_VALUE;
    memcpy(uuid->bytes, "simcuda-device-", 15);
    uuid->bytes[15] = (char)('0' + dev);
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
    return cuDeviceGetUuid_v2(uuid, dev);
}

/* Simulated devices do not reach each other's memory. */
CUresult cuDeviceCanAccessPeer(int *canAccessPeer, CUdevice dev, CUdevice peerDev)
{
    CUresult e = enter_dev(dev);
    if (e != CUDA_SUCCESS)
        return e;
    if (peerDev < 0 || peerDev >= sh_cfg.ndevices)
        return CUDA_ERROR_INVALID_DEVICE;
    if (!canAccessPeer)
        return CUDA_ERROR_INVALID_VALUE;
    *canAccessPeer = 0;
    return CUDA_SUCCESS;
}

/* The current context's device: its size less its device allocations. */
CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total)
{
    CUresult e = sc_enter(true);
    if (e != CUDA_SUCCESS)
        return e;
    if (!free_bytes || !total)
        return CUDA_ERROR_INVALID_VALUE;
    size_t used = sh_mem_device_bytes(sh_current_device());
    *total = SC_TOTAL_MEM;
    *free_bytes = used < SC_TOTAL_MEM ? SC_TOTAL_MEM - used : 0;
    return CUDA_SUCCESS;
}

/* The H200's range: 0 (least) to -5 (greatest). */
CUresult cuCtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
    CUresult e = sc_enter(true);
    if (e != CUDA_SUCCESS)
        return e;
    if (leastPriority)
        *leastPriority = 0;
    if (greatestPriority)
        *greatestPriority = -5;
    return CUDA_SUCCESS;
}
