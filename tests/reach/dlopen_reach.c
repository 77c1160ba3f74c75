/*
 * dlopen_reach.c - a program that reaches the HIP runtime the way Python
 * ctypes or Julia do: dlopen(RTLD_LOCAL) and dlsym(handle, ...), never
 * linking against it. With the argument "procaddr" it takes the HIP
 * functions from hipGetProcAddress (ROCm 6.2+ style) instead. It unregisters a buffer while a non-blocking stream's
 * kernel still writes into it, then frees it (the legacy hazard of
 * unreg_busy_stream), and verifies the kernel's data landed.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <hip/hip_runtime_api.h>

#include "reach_hip.h"

typedef hipError_t (*procaddr_t)(const char *, void **, int, uint64_t, int *);
static procaddr_t procaddr;

static void *lookup(void *h, const char *name)
{
    if (procaddr && strncmp(name, "hip", 3) == 0) {
        void *p = NULL;
        int status = -1;
        if (procaddr(name, &p, 600, 0, &status) != hipSuccess || status != 0)
            return NULL;
        return p;
    }
    return dlsym(h, name);
}

#define LOAD(type, var, name)                                          \
    type var = (type)lookup(h, name);                                  \
    if (!var) {                                                        \
        fprintf(stderr, "lookup(%s) failed\n", name);                  \
        return 1;                                                      \
    }

int main(int argc, char **argv)
{
    void *h = dlopen("libamdhip64.so.5", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    if (argc > 1 && strcmp(argv[1], "procaddr") == 0) {
        procaddr = (procaddr_t)dlsym(h, "hipGetProcAddress");
        if (!procaddr) {
            fprintf(stderr, "no hipGetProcAddress\n");
            return 1;
        }
    }
    LOAD(reg_t, reg, "hipHostRegister");
    LOAD(unreg_t, unreg, "hipHostUnregister");
    LOAD(screate_t, screate, "hipStreamCreateWithFlags");
    LOAD(ssync_t, ssync, "hipStreamSynchronize");
    LOAD(launch_t, launch, "simhip_launch_kernel");
    LOAD(dwrite_t, dw, "simhip_device_write");
    dev_write = dw;

    return reach_hazard(reg, unreg, screate, ssync, launch);
}
