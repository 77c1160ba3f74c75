/*
 * procaddr.c - hipGetProcAddress, as ROCm 6.2+ has it (absent from the 5.2
 * ABI, so exported in its own version node, simhip_6.2). The library is
 * linked with -Bsymbolic-functions: the addresses below are simhip's own
 * functions, never an interposer's, as a real runtime's table would be.
 */
#include <stdint.h>
#include <string.h>
#include <hip/hip_runtime_api.h>

/* hipDriverProcAddressQueryResult of ROCm 6.2 */
enum { SH_PROC_SUCCESS = 0, SH_PROC_SYMBOL_NOT_FOUND = 1, SH_PROC_VERSION_NOT_SUFFICIENT = 2 };

hipError_t hipGetProcAddress(const char *symbol, void **pfn, int hipVersion, uint64_t flags,
                             int *symbolStatus);

static const struct {
    const char *name;
    void *fn;
} table[] = {
    {"hipDeviceSynchronize", (void *)&hipDeviceSynchronize},
    {"hipEventCreate", (void *)&hipEventCreate},
    {"hipEventCreateWithFlags", (void *)&hipEventCreateWithFlags},
    {"hipEventDestroy", (void *)&hipEventDestroy},
    {"hipEventElapsedTime", (void *)&hipEventElapsedTime},
    {"hipEventQuery", (void *)&hipEventQuery},
    {"hipEventRecord", (void *)&hipEventRecord},
    {"hipEventSynchronize", (void *)&hipEventSynchronize},
    {"hipFree", (void *)&hipFree},
    {"hipGetDevice", (void *)&hipGetDevice},
    {"hipGetDeviceCount", (void *)&hipGetDeviceCount},
    {"hipGetErrorName", (void *)&hipGetErrorName},
    {"hipGetErrorString", (void *)&hipGetErrorString},
    {"hipGetLastError", (void *)&hipGetLastError},
    {"hipGraphDestroy", (void *)&hipGraphDestroy},
    {"hipGraphExecDestroy", (void *)&hipGraphExecDestroy},
    {"hipGraphInstantiate", (void *)&hipGraphInstantiate},
    {"hipGraphLaunch", (void *)&hipGraphLaunch},
    {"hipHostFree", (void *)&hipHostFree},
    {"hipHostGetDevicePointer", (void *)&hipHostGetDevicePointer},
    {"hipHostGetFlags", (void *)&hipHostGetFlags},
    {"hipHostMalloc", (void *)&hipHostMalloc},
    {"hipHostRegister", (void *)&hipHostRegister},
    {"hipHostUnregister", (void *)&hipHostUnregister},
    {"hipInit", (void *)&hipInit},
    {"hipLaunchHostFunc", (void *)&hipLaunchHostFunc},
    {"hipMalloc", (void *)&hipMalloc},
    {"hipMemcpy", (void *)&hipMemcpy},
    {"hipMemcpyAsync", (void *)&hipMemcpyAsync},
    {"hipMemset", (void *)&hipMemset},
    {"hipMemsetAsync", (void *)&hipMemsetAsync},
    {"hipMemsetD32Async", (void *)&hipMemsetD32Async},
    {"hipPeekAtLastError", (void *)&hipPeekAtLastError},
    {"hipPointerGetAttributes", (void *)&hipPointerGetAttributes},
    {"hipRuntimeGetVersion", (void *)&hipRuntimeGetVersion},
    {"hipSetDevice", (void *)&hipSetDevice},
    {"hipStreamAddCallback", (void *)&hipStreamAddCallback},
    {"hipStreamBeginCapture", (void *)&hipStreamBeginCapture},
    {"hipStreamCreate", (void *)&hipStreamCreate},
    {"hipStreamCreateWithFlags", (void *)&hipStreamCreateWithFlags},
    {"hipStreamCreateWithPriority", (void *)&hipStreamCreateWithPriority},
    {"hipStreamDestroy", (void *)&hipStreamDestroy},
    {"hipStreamEndCapture", (void *)&hipStreamEndCapture},
    {"hipStreamGetCaptureInfo", (void *)&hipStreamGetCaptureInfo},
    {"hipStreamIsCapturing", (void *)&hipStreamIsCapturing},
    {"hipStreamQuery", (void *)&hipStreamQuery},
    {"hipStreamSynchronize", (void *)&hipStreamSynchronize},
    {"hipStreamWaitEvent", (void *)&hipStreamWaitEvent},
    {"hipThreadExchangeStreamCaptureMode", (void *)&hipThreadExchangeStreamCaptureMode},
};

hipError_t hipGetProcAddress(const char *symbol, void **pfn, int hipVersion, uint64_t flags,
                             int *symbolStatus)
{
    (void)hipVersion;
    (void)flags;
    if (!symbol || !pfn)
        return hipErrorInvalidValue;
    *pfn = NULL;
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        if (strcmp(table[i].name, symbol) == 0) {
            *pfn = table[i].fn;
            if (symbolStatus)
                *symbolStatus = SH_PROC_SUCCESS;
            return hipSuccess;
        }
    }
    if (symbolStatus)
        *symbolStatus = SH_PROC_SYMBOL_NOT_FOUND;
    return hipErrorNotFound;
}
