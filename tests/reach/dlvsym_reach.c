/*
 * dlvsym_reach.c - a program (or a JIT, a loader) that takes its HIP
 * functions with dlvsym, a versioned look-up, which never takes an
 * unversioned definition such as an LD_PRELOAD library's. Usage:
 *
 *   dlvsym_reach SONAME HOW      HOW: handle, default, next, next-before
 *                                (dlvsym_common.h)
 *
 * It looks up hooked functions, functions safepin does not hook, and names
 * or versions the runtime does not have (one line each), then meets the
 * legacy hazard through what it got: a buffer unregistered while a
 * non-blocking stream's kernel still writes into it, then freed (ROCm 5.2
 * does not wait for that stream: the device faults). Exit 0 and "OK" when
 * the kernel's data all landed; 3 when the functions were not all found.
 */
#include <stdint.h>
#include <unistd.h>
#include <hip/hip_runtime_api.h>

#include "dlvsym_common.h"

#include "reach_hip.h"

int main(int argc, char **argv)
{
    if (argc < 3 || dv_load(argv[2], argv[1]))
        return 2;
    const char *how = argv[2];
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* hooked: safepin must hand out its shims */
    reg_t reg = (reg_t)dv_lookup(how, "hipHostRegister", "hip_4.2");
    unreg_t unreg = (unreg_t)dv_lookup(how, "hipHostUnregister", "hip_4.2");
    screate_t screate = (screate_t)dv_lookup(how, "hipStreamCreateWithFlags", "hip_4.2");
    dv_lookup(how, "hipFree", "hip_4.2");
    dv_lookup(how, "hipPointerGetAttributes", "hip_4.2");
    dv_lookup(how, "hipLaunchHostFunc", "hip_5.3");
    dv_lookup(how, "hipGetProcAddress", "hip_6.1");    /* .so.6/.so.7 (simhip_6.2 in .so.5) */
    dv_lookup(how, "hipGetProcAddress", "simhip_6.2"); /* .so.5 */
    /* not hooked: glibc's own answer */
    ssync_t ssync = (ssync_t)dv_lookup(how, "hipStreamSynchronize", "hip_4.2");
    launch_t launch = (launch_t)dv_lookup(how, "simhip_launch_kernel", "simhip_ext");
    dev_write = (dwrite_t)dv_lookup(how, "simhip_device_write", "simhip_ext");
    /* names and versions the runtime does not have: NULL and dlerror() */
    dv_lookup(how, "hipNoSuchFunction", "hip_4.2");
    dv_lookup(how, "hipHostRegister", "hip_5.2");   /* an existing node, not hipHostRegister's */
    dv_lookup(how, "hipHostRegister", "hip_9.9");   /* no such node */
    dv_lookup(how, "hipLaunchHostFunc", "hip_4.2"); /* defined in hip_5.3 only */
    if (!reg || !unreg || !screate || !ssync || !launch || !dev_write) {
        printf("not all found\n");
        return 3;
    }

    return reach_hazard(reg, unreg, screate, ssync, launch);
}
