/*
 * direct_link.c - a program linked with -lcuda calling the driver directly
 * (through the PLT), as driver-API code and HIP-on-NVIDIA's wrappers do.
 * Then the hazard.
 */
#include "reach_cuda.h"

int main(void)
{
    rc_api a = {cuInit, cuDeviceGet, cuDevicePrimaryCtxRetain, cuCtxSetCurrent,
                cuMemHostRegister_v2, cuMemHostUnregister};
    rc_show("cuMemHostRegister_v2", (void *)a.reg);
    rc_show("cuMemHostUnregister", (void *)a.unreg);
    rc_show("cuInit", (void *)a.init);
    return rc_hazard(&a);
}
