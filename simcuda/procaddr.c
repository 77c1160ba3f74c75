/*
 * procaddr.c - cuGetProcAddress and cuGetProcAddress_v2: a look-up by base
 * name, CUDA version and flags, as the real driver answers it.
 *
 * Each row names a base name, the CUDA version that introduced that form,
 * whether it is the per-thread-default-stream form, and the function. The
 * answer is the newest form whose version is <= the version asked; with
 * CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM (flags 2) the newest
 * per-thread form is preferred where one exists by that version. A base name known only in
 * later versions: CUDA_ERROR_NOT_FOUND, status VERSION_NOT_SUFFICIENT. The
 * library is linked with -Bsymbolic-functions: the addresses are simcuda's
 * own functions, never an interposer's.
 */
#include <string.h>

#include "sc_internal.h"
#include "unmodelled.h"

struct proc_row {
    const char *name;
    int version;
    bool ptds;
    void *fn;
};

#define ROW(name, ver, fn) { name, ver, false, (void *)&fn }
#define PTDS(name, ver, fn) { name, ver, true, (void *)&fn }

static const struct proc_row rows[] = {
    ROW("cuInit", 2000, cuInit),
    ROW("cuDriverGetVersion", 2020, cuDriverGetVersion),
    ROW("cuDeviceGet", 2000, cuDeviceGet),
    ROW("cuDeviceGetCount", 2000, cuDeviceGetCount),
    ROW("cuGetErrorName", 6000, cuGetErrorName),
    ROW("cuGetErrorString", 6000, cuGetErrorString),
    ROW("cuCtxCreate", 3020, cuCtxCreate_v2),
    ROW("cuCtxDestroy", 4000, cuCtxDestroy_v2),
    ROW("cuCtxGetCurrent", 4000, cuCtxGetCurrent),
    ROW("cuCtxSetCurrent", 4000, cuCtxSetCurrent),
    ROW("cuCtxGetDevice", 2000, cuCtxGetDevice),
    ROW("cuCtxGetDevice", 13000, cuCtxGetDevice_v2),
    ROW("cuCtxGetApiVersion", 3020, cuCtxGetApiVersion),
    ROW("cuCtxSynchronize", 2000, cuCtxSynchronize),
    ROW("cuDevicePrimaryCtxRetain", 7000, cuDevicePrimaryCtxRetain),
    ROW("cuDevicePrimaryCtxGetState", 7000, cuDevicePrimaryCtxGetState),
    ROW("cuDevicePrimaryCtxRelease", 7000, cuDevicePrimaryCtxRelease),
    ROW("cuDevicePrimaryCtxRelease", 11000, cuDevicePrimaryCtxRelease_v2),
    ROW("cuDevicePrimaryCtxReset", 7000, cuDevicePrimaryCtxReset),
    ROW("cuDevicePrimaryCtxReset", 11000, cuDevicePrimaryCtxReset_v2),
    ROW("cuMemAlloc", 3020, cuMemAlloc_v2),
    ROW("cuMemFree", 3020, cuMemFree_v2),
    ROW("cuMemHostAlloc", 2020, cuMemHostAlloc),
    ROW("cuMemFreeHost", 2000, cuMemFreeHost),
    ROW("cuMemHostRegister", 4000, cuMemHostRegister),
    ROW("cuMemHostRegister", 6050, cuMemHostRegister_v2),
    ROW("cuMemHostUnregister", 4000, cuMemHostUnregister),
    ROW("cuMemHostGetDevicePointer", 3020, cuMemHostGetDevicePointer_v2),
    ROW("cuMemHostGetFlags", 2030, cuMemHostGetFlags),
    ROW("cuPointerGetAttribute", 4000, cuPointerGetAttribute),
    ROW("cuPointerGetAttributes", 7000, cuPointerGetAttributes),
    ROW("cuMemcpyHtoDAsync", 3020, cuMemcpyHtoDAsync_v2),
    PTDS("cuMemcpyHtoDAsync", 7000, cuMemcpyHtoDAsync_v2_ptsz),
    ROW("cuMemcpyDtoHAsync", 3020, cuMemcpyDtoHAsync_v2),
    PTDS("cuMemcpyDtoHAsync", 7000, cuMemcpyDtoHAsync_v2_ptsz),
    ROW("cuMemcpyAsync", 4000, cuMemcpyAsync),
    PTDS("cuMemcpyAsync", 7000, cuMemcpyAsync_ptsz),
    ROW("cuMemsetD8Async", 3020, cuMemsetD8Async),
    PTDS("cuMemsetD8Async", 7000, cuMemsetD8Async_ptsz),
    ROW("cuMemsetD32Async", 3020, cuMemsetD32Async),
    PTDS("cuMemsetD32Async", 7000, cuMemsetD32Async_ptsz),
    ROW("cuStreamCreate", 2000, cuStreamCreate),
    ROW("cuStreamCreateWithPriority", 5050, cuStreamCreateWithPriority),
    ROW("cuStreamDestroy", 4000, cuStreamDestroy_v2),
    ROW("cuStreamSynchronize", 2000, cuStreamSynchronize),
    PTDS("cuStreamSynchronize", 7000, cuStreamSynchronize_ptsz),
    ROW("cuStreamQuery", 2000, cuStreamQuery),
    PTDS("cuStreamQuery", 7000, cuStreamQuery_ptsz),
    ROW("cuStreamAddCallback", 5000, cuStreamAddCallback),
    PTDS("cuStreamAddCallback", 7000, cuStreamAddCallback_ptsz),
    ROW("cuLaunchHostFunc", 10000, cuLaunchHostFunc),
    PTDS("cuLaunchHostFunc", 10000, cuLaunchHostFunc_ptsz),
    ROW("cuStreamBeginCapture", 10000, cuStreamBeginCapture),
    PTDS("cuStreamBeginCapture", 10000, cuStreamBeginCapture_ptsz),
    ROW("cuStreamBeginCapture", 10010, cuStreamBeginCapture_v2),
    PTDS("cuStreamBeginCapture", 10010, cuStreamBeginCapture_v2_ptsz),
    ROW("cuStreamEndCapture", 10000, cuStreamEndCapture),
    PTDS("cuStreamEndCapture", 10000, cuStreamEndCapture_ptsz),
    ROW("cuStreamIsCapturing", 10000, cuStreamIsCapturing),
    PTDS("cuStreamIsCapturing", 10000, cuStreamIsCapturing_ptsz),
    ROW("cuThreadExchangeStreamCaptureMode", 10010, cuThreadExchangeStreamCaptureMode),
    ROW("cuEventCreate", 2000, cuEventCreate),
    ROW("cuEventRecord", 2000, cuEventRecord),
    PTDS("cuEventRecord", 7000, cuEventRecord_ptsz),
    ROW("cuEventQuery", 2000, cuEventQuery),
    ROW("cuEventSynchronize", 2000, cuEventSynchronize),
    ROW("cuEventDestroy", 4000, cuEventDestroy_v2),
    ROW("cuGraphInstantiate", 10000, cuGraphInstantiate),
    ROW("cuGraphInstantiate", 11000, cuGraphInstantiate_v2),
    ROW("cuGraphInstantiate", 12000, cuGraphInstantiateWithFlags),
    ROW("cuGraphInstantiateWithFlags", 11040, cuGraphInstantiateWithFlags),
    ROW("cuGraphLaunch", 10000, cuGraphLaunch),
    PTDS("cuGraphLaunch", 10000, cuGraphLaunch_ptsz),
    ROW("cuGraphExecDestroy", 10000, cuGraphExecDestroy),
    ROW("cuGraphDestroy", 10000, cuGraphDestroy),
    ROW("cuModuleLoad", 2000, cuModuleLoad),
    ROW("cuModuleLoadData", 2000, cuModuleLoadData),
    ROW("cuModuleLoadDataEx", 2010, cuModuleLoadDataEx),
    ROW("cuModuleLoadFatBinary", 2000, cuModuleLoadFatBinary),
    ROW("cuModuleUnload", 2000, cuModuleUnload),
    ROW("cuModuleGetFunction", 2000, cuModuleGetFunction),
    ROW("cuFuncGetAttribute", 2020, cuFuncGetAttribute),
    ROW("cuFuncSetAttribute", 9000, cuFuncSetAttribute),
    ROW("cuFuncSetCacheConfig", 3000, cuFuncSetCacheConfig),
    ROW("cuLaunchKernel", 4000, cuLaunchKernel),
    PTDS("cuLaunchKernel", 7000, cuLaunchKernel_ptsz),
    ROW("cuLaunchKernelEx", 11060, cuLaunchKernelEx),
    PTDS("cuLaunchKernelEx", 11060, cuLaunchKernelEx_ptsz),
    ROW("cuLaunchCooperativeKernel", 9000, cuLaunchCooperativeKernel),
    PTDS("cuLaunchCooperativeKernel", 9000, cuLaunchCooperativeKernel_ptsz),
    ROW("cuDeviceGetName", 2000, cuDeviceGetName),
    ROW("cuDeviceGetAttribute", 2000, cuDeviceGetAttribute),
    ROW("cuDeviceTotalMem", 3020, cuDeviceTotalMem_v2),
    ROW("cuDeviceComputeCapability", 2000, cuDeviceComputeCapability),
    ROW("cuDeviceGetUuid", 9020, cuDeviceGetUuid),
    ROW("cuDeviceGetUuid", 11040, cuDeviceGetUuid_v2),
    ROW("cuDeviceCanAccessPeer", 4000, cuDeviceCanAccessPeer),
    ROW("cuMemGetInfo", 3020, cuMemGetInfo_v2),
    ROW("cuCtxGetStreamPriorityRange", 5050, cuCtxGetStreamPriorityRange),
    ROW("cuCtxPushCurrent", 4000, cuCtxPushCurrent_v2),
    ROW("cuCtxPopCurrent", 4000, cuCtxPopCurrent_v2),
    ROW("cuCtxCreate", 13000, cuCtxCreate_v4),
    ROW("cuCtxGetFlags", 7000, cuCtxGetFlags),
    ROW("cuDevicePrimaryCtxSetFlags", 11000, cuDevicePrimaryCtxSetFlags_v2),
    ROW("cuMemAllocHost", 3020, cuMemAllocHost_v2),
    ROW("cuMemAllocManaged", 6000, cuMemAllocManaged),
    ROW("cuMemAllocPitch", 3020, cuMemAllocPitch_v2),
    ROW("cuMemGetAddressRange", 3020, cuMemGetAddressRange_v2),
    ROW("cuMemcpyHtoD", 3020, cuMemcpyHtoD_v2),
    PTDS("cuMemcpyHtoD", 7000, cuMemcpyHtoD_v2_ptds),
    ROW("cuMemcpyDtoH", 3020, cuMemcpyDtoH_v2),
    PTDS("cuMemcpyDtoH", 7000, cuMemcpyDtoH_v2_ptds),
    ROW("cuMemcpyDtoD", 3020, cuMemcpyDtoD_v2),
    PTDS("cuMemcpyDtoD", 7000, cuMemcpyDtoD_v2_ptds),
    ROW("cuMemcpy", 4000, cuMemcpy),
    PTDS("cuMemcpy", 7000, cuMemcpy_ptds),
    ROW("cuMemcpyDtoDAsync", 3020, cuMemcpyDtoDAsync_v2),
    PTDS("cuMemcpyDtoDAsync", 7000, cuMemcpyDtoDAsync_v2_ptsz),
    ROW("cuMemsetD8", 3020, cuMemsetD8_v2),
    PTDS("cuMemsetD8", 7000, cuMemsetD8_v2_ptds),
    ROW("cuMemsetD16", 3020, cuMemsetD16_v2),
    PTDS("cuMemsetD16", 7000, cuMemsetD16_v2_ptds),
    ROW("cuMemsetD32", 3020, cuMemsetD32_v2),
    PTDS("cuMemsetD32", 7000, cuMemsetD32_v2_ptds),
    ROW("cuMemsetD16Async", 3020, cuMemsetD16Async),
    PTDS("cuMemsetD16Async", 7000, cuMemsetD16Async_ptsz),
    ROW("cuEventElapsedTime", 2000, cuEventElapsedTime),
    ROW("cuEventElapsedTime", 12080, cuEventElapsedTime_v2),
    ROW("cuEventRecordWithFlags", 11010, cuEventRecordWithFlags),
    PTDS("cuEventRecordWithFlags", 11010, cuEventRecordWithFlags_ptsz),
    ROW("cuStreamWaitEvent", 3020, cuStreamWaitEvent),
    PTDS("cuStreamWaitEvent", 7000, cuStreamWaitEvent_ptsz),
    ROW("cuStreamGetFlags", 5050, cuStreamGetFlags),
    PTDS("cuStreamGetFlags", 7000, cuStreamGetFlags_ptsz),
    ROW("cuStreamGetPriority", 5050, cuStreamGetPriority),
    PTDS("cuStreamGetPriority", 7000, cuStreamGetPriority_ptsz),
    ROW("cuGetProcAddress", 11030, cuGetProcAddress),
    ROW("cuGetProcAddress", 12000, cuGetProcAddress_v2),
};

/* A name simcuda does not model: its exported form (NAME, NAME_vN, with
 * _ptsz/_ptds where asked), which answers CUDA_ERROR_NOT_SUPPORTED. Any
 * version: all of that name's forms give the same answer. */
static void *unmodelled_form(const char *base, bool want_ptds)
{
    size_t n = strlen(base);
    void *plain = NULL, *ptds = NULL;
    for (const struct sc_unmodelled *u = sc_unmodelled; u->name; u++) {
        if (strncmp(u->name, base, n) != 0)
            continue;
        const char *rest = u->name + n;
        if (rest[0] == '_' && rest[1] == 'v' && rest[2] >= '0' && rest[2] <= '9')
            rest += 3;
        bool pt = !strcmp(rest, "_ptsz") || !strcmp(rest, "_ptds");
        if (*rest && !pt)
            continue;
        if (pt)
            ptds = u->fn;
        else
            plain = u->fn;
    }
    return want_ptds && ptds ? ptds : plain ? plain : ptds;
}

static CUresult lookup(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                       CUdriverProcAddressQueryResult *status)
{
    if (!symbol || !pfn || (flags & ~(cuuint64_t)3))
        return CUDA_ERROR_INVALID_VALUE;
    bool want_ptds = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
    const struct proc_row *best = NULL;
    bool known = false;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const struct proc_row *r = &rows[i];
        if (strcmp(r->name, symbol) != 0)
            continue;
        known = true;
        if (r->version > cudaVersion || (r->ptds && !want_ptds))
            continue;
        /* The asked stream form first, then the newest version. */
        if (!best || r->ptds > best->ptds ||
            (r->ptds == best->ptds && r->version > best->version))
            best = r;
    }
    *pfn = NULL;
    if (!best && !known && (*pfn = unmodelled_form(symbol, want_ptds)) != NULL) {
        if (status)
            *status = CU_GET_PROC_ADDRESS_SUCCESS;
        return CUDA_SUCCESS;
    }
    if (!best) {
        if (status)
            *status = known ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                            : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        return CUDA_ERROR_NOT_FOUND;
    }
    *pfn = best->fn;
    if (status)
        *status = CU_GET_PROC_ADDRESS_SUCCESS;
    return CUDA_SUCCESS;
}

CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    return lookup(symbol, pfn, cudaVersion, flags, NULL);
}

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *symbolStatus)
{
    return lookup(symbol, pfn, cudaVersion, flags, symbolStatus);
}
