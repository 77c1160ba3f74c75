/*
 * device.c - devices: count (SIMHIP_DEVICES), the calling thread's current
 * device, hipInit, hipRuntimeGetVersion, hipDeviceSynchronize.
 */
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
