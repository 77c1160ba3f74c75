/*
 * device.c - devices: count (SIMHIP_DEVICES), the calling thread's current
 * device, hipInit, hipDeviceSynchronize.
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
