/*
 * device.c - devices: count (SIMHIP_DEVICES), the calling thread's current
 * device, hipInit, hipRuntimeGetVersion, hipDeviceSynchronize.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

static _Thread_local int tl_device;

int sh_current_device(void)
{
    return tl_device;
}

hipError_t hipInit(unsigned int flags)
{
    sh_init();
    return flags ? sh_ret(hipErrorInvalidValue) : hipSuccess;
}

/* HIP_VERSION (major * 10000000 + minor * 100000 + patch) of a runtime
 * with the personality's behaviours and ABI: legacy is Debian's 5.2.3
 * (HIP 5.2.21153); current keeps the 5.x memory-type values, so it says
 * 5.7 (HIP 5.7.31921); rocm7 says 7.2 (build number 0), the first
 * release line with all three of its behaviours. A program (and safepin)
 * reads hipPointerGetAttributes' memory types by this number. */
hipError_t hipRuntimeGetVersion(int *runtimeVersion)
{
    sh_init();
    if (!runtimeVersion)
        return sh_ret(hipErrorInvalidValue);
    switch (sh_cfg.personality) {
    case SH_LEGACY:
        *runtimeVersion = 50221153;
        break;
    case SH_ROCM7:
        *runtimeVersion = 70200000;
        break;
    default:
        *runtimeVersion = 50731921;
        break;
    }
    return hipSuccess;
}

hipError_t hipGetDeviceCount(int *count)
{
    sh_init();
    if (!count)
        return sh_ret(hipErrorInvalidValue);
    *count = sh_cfg.ndevices;
    return hipSuccess;
}

hipError_t hipSetDevice(int deviceId)
{
    sh_init();
    if (deviceId < 0 || deviceId >= sh_cfg.ndevices)
        return sh_ret(hipErrorInvalidDevice);
    tl_device = deviceId;
    return hipSuccess;
}

hipError_t hipGetDevice(int *deviceId)
{
    sh_init();
    if (!deviceId)
        return sh_ret(hipErrorInvalidValue);
    *deviceId = tl_device;
    return hipSuccess;
}

/* Waits for every stream of the current device (non-blocking ones too). */
hipError_t hipDeviceSynchronize(void)
{
    sh_init();
    sh_sync(SYNC_DEVICE, NULL, tl_device, "hipDeviceSynchronize");
    return hipSuccess;
}

/* ---- the simulated device's properties ------------------------------------
 * One kind of device, described once: an MI210-class gfx90a board (64 GiB,
 * 104 compute units, wave64). Programs read these to size launches; nothing
 * in the model depends on them. */
#define SH_TOTAL_MEM ((size_t)64 << 30)
#define SH_CUS 104

static bool valid_device(int d)
{
    return d >= 0 && d < sh_cfg.ndevices;
}

hipError_t hipDeviceGet(hipDevice_t *device, int ordinal)
{
    sh_init();
    if (!device)
        return sh_ret(hipErrorInvalidValue);
    if (!valid_device(ordinal))
        return sh_ret(hipErrorInvalidDevice);
    *device = ordinal;
    return hipSuccess;
}

hipError_t hipDeviceGetName(char *name, int len, hipDevice_t device)
{
    sh_init();
    if (!name || len <= 0)
        return sh_ret(hipErrorInvalidValue);
    if (!valid_device(device))
        return sh_ret(hipErrorInvalidDevice);
    snprintf(name, (size_t)len, "simhip simulated device %d", device);
    return hipSuccess;
}

hipError_t hipDeviceTotalMem(size_t *bytes, hipDevice_t device)
{
    sh_init();
    if (!bytes)
        return sh_ret(hipErrorInvalidValue);
    if (!valid_device(device))
        return sh_ret(hipErrorInvalidDevice);
    *bytes = SH_TOTAL_MEM;
    return hipSuccess;
}

hipError_t hipDeviceComputeCapability(int *major, int *minor, hipDevice_t device)
{
    sh_init();
    if (!major || !minor)
        return sh_ret(hipErrorInvalidValue);
    if (!valid_device(device))
        return sh_ret(hipErrorInvalidDevice);
    *major = 9;
    *minor = 0;
    return hipSuccess;
}

static void props_of(hipDeviceProp_t *p, int device)
{
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "simhip simulated device %d", device);
    snprintf(p->gcnArchName, sizeof p->gcnArchName, "gfx90a:sramecc+:xnack-");
    p->totalGlobalMem = SH_TOTAL_MEM;
    p->sharedMemPerBlock = 64 << 10;
    p->regsPerBlock = 65536;
    p->warpSize = 64;
    p->maxThreadsPerBlock = 1024;
    p->maxThreadsDim[0] = p->maxThreadsDim[1] = p->maxThreadsDim[2] = 1024;
    p->maxGridSize[0] = p->maxGridSize[1] = p->maxGridSize[2] = 0x7fffffff;
    p->clockRate = 1700000;
    p->memoryClockRate = 1600000;
    p->memoryBusWidth = 4096;
    p->totalConstMem = SH_TOTAL_MEM;
    p->major = 9;
    p->minor = 0;
    p->multiProcessorCount = SH_CUS;
    p->l2CacheSize = 8 << 20;
    p->maxThreadsPerMultiProcessor = 2048;
    p->clockInstructionRate = 1000000;
    p->concurrentKernels = 1;
    p->pciBusID = 0x10 + device;
    p->maxSharedMemoryPerMultiProcessor = 64 << 10;
    p->canMapHostMemory = 1;
    p->gcnArch = 910;
    p->managedMemory = 1;
    p->directManagedMemAccessFromHost = 0;
    p->concurrentManagedAccess = 1;
    p->pageableMemoryAccess = 0;
    p->maxTexture1D = 16384;
    p->memPitch = 0x7fffffff;
    p->textureAlignment = 256;
    p->texturePitchAlignment = 256;
    p->isLargeBar = 1;
    p->cooperativeLaunch = 1;
}

hipError_t hipGetDeviceProperties(hipDeviceProp_t *p, int device)
{
    sh_init();
    if (!p)
        return sh_ret(hipErrorInvalidValue);
    if (!valid_device(device))
        return sh_ret(hipErrorInvalidDevice);
    props_of(p, device);
    return hipSuccess;
}

/* The attributes a program asks for, from the same description; an
 * attribute of the enum that the model does not describe is 0. */
hipError_t hipDeviceGetAttribute(int *value, hipDeviceAttribute_t attr, int device)
{
    sh_init();
    if (!value)
        return sh_ret(hipErrorInvalidValue);
    if (!valid_device(device))
        return sh_ret(hipErrorInvalidDevice);
    if ((int)attr < 0 || (int)attr > hipDeviceAttributeAmdSpecificEnd)
        return sh_ret(hipErrorInvalidValue);
    hipDeviceProp_t p;
    props_of(&p, device);
    int v = 0;
    switch (attr) {
    case hipDeviceAttributeAsyncEngineCount: v = 2; break;
    case hipDeviceAttributeCanMapHostMemory: v = 1; break;
    case hipDeviceAttributeClockRate: v = p.clockRate; break;
    case hipDeviceAttributeConcurrentKernels: v = 1; break;
    case hipDeviceAttributeConcurrentManagedAccess: v = 1; break;
    case hipDeviceAttributeCooperativeLaunch: v = 1; break;
    case hipDeviceAttributeComputeCapabilityMajor: v = p.major; break;
    case hipDeviceAttributeComputeCapabilityMinor: v = p.minor; break;
    case hipDeviceAttributeManagedMemory: v = 1; break;
    case hipDeviceAttributeMaxBlockDimX:
    case hipDeviceAttributeMaxBlockDimY:
    case hipDeviceAttributeMaxBlockDimZ: v = 1024; break;
    case hipDeviceAttributeMaxGridDimX:
    case hipDeviceAttributeMaxGridDimY:
    case hipDeviceAttributeMaxGridDimZ: v = 0x7fffffff; break;
    case hipDeviceAttributeMaxThreadsPerBlock: v = p.maxThreadsPerBlock; break;
    case hipDeviceAttributeMaxThreadsPerMultiProcessor: v = p.maxThreadsPerMultiProcessor; break;
    case hipDeviceAttributeMaxPitch: v = (int)p.memPitch; break;
    case hipDeviceAttributeMemoryBusWidth: v = p.memoryBusWidth; break;
    case hipDeviceAttributeMemoryClockRate: v = p.memoryClockRate; break;
    case hipDeviceAttributeMultiprocessorCount: v = p.multiProcessorCount; break;
    case hipDeviceAttributePciBusId: v = p.pciBusID; break;
    case hipDeviceAttributeMaxRegistersPerBlock: v = p.regsPerBlock; break;
    case hipDeviceAttributeMaxSharedMemoryPerBlock: v = (int)p.sharedMemPerBlock; break;
    case hipDeviceAttributeMaxSharedMemoryPerMultiprocessor: v = (int)p.maxSharedMemoryPerMultiProcessor; break;
    case hipDeviceAttributeStreamPrioritiesSupported: v = 1; break;
    case hipDeviceAttributeTextureAlignment: v = 256; break;
    case hipDeviceAttributeUnifiedAddressing: v = 1; break;
    case hipDeviceAttributeWarpSize: v = p.warpSize; break;
    case hipDeviceAttributeL2CacheSize: v = p.l2CacheSize; break;
    case hipDeviceAttributeIsLargeBar: v = 1; break;
    case hipDeviceAttributeGcnArch: v = p.gcnArch; break;
    case hipDeviceAttributeFineGrainSupport: v = 1; break;
    case hipDeviceAttributeCanUseHostPointerForRegisteredMem: v = 1; break;
    default: v = 0; break;
    }
    *value = v;
    return hipSuccess;
}

/* Free: the device size less what device allocations on it hold. */
hipError_t hipMemGetInfo(size_t *free_bytes, size_t *total)
{
    sh_init();
    if (!free_bytes || !total)
        return sh_ret(hipErrorInvalidValue);
    size_t used = sh_mem_device_bytes(tl_device);
    *total = SH_TOTAL_MEM;
    *free_bytes = used < SH_TOTAL_MEM ? SH_TOTAL_MEM - used : 0;
    return hipSuccess;
}

/* Simulated devices do not reach each other's memory. */
hipError_t hipDeviceCanAccessPeer(int *canAccess, int device, int peer)
{
    sh_init();
    if (!canAccess)
        return sh_ret(hipErrorInvalidValue);
    if (!valid_device(device) || !valid_device(peer))
        return sh_ret(hipErrorInvalidDevice);
    *canAccess = 0;
    return hipSuccess;
}

/* HIP's range: 0 (least) to -1 (greatest); priorities are kept, not
 * scheduled by. */
hipError_t hipDeviceGetStreamPriorityRange(int *least, int *greatest)
{
    sh_init();
    if (least)
        *least = 0;
    if (greatest)
        *greatest = -1;
    return hipSuccess;
}

hipError_t hipDriverGetVersion(int *driverVersion)
{
    sh_init();
    if (!driverVersion)
        return sh_ret(hipErrorInvalidValue);
    *driverVersion = 50221153; /* the ROCm 5.2 driver (KFD) the ABI stands for */
    return hipSuccess;
}

/* Waits for the device; allocations and registrations stay. */
hipError_t hipDeviceReset(void)
{
    sh_init();
    sh_sync(SYNC_DEVICE, NULL, tl_device, "hipDeviceReset");
    return hipSuccess;
}

static _Thread_local unsigned tl_device_flags;

hipError_t hipSetDeviceFlags(unsigned flags)
{
    sh_init();
    if (flags & ~0x1fu)
        return sh_ret(hipErrorInvalidValue);
    tl_device_flags = flags;
    return hipSuccess;
}

hipError_t hipGetDeviceFlags(unsigned int *flags)
{
    sh_init();
    if (!flags)
        return sh_ret(hipErrorInvalidValue);
    *flags = tl_device_flags;
    return hipSuccess;
}
