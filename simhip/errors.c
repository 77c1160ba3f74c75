/*
 * errors.c - error names and strings, the per-thread last error, and the
 * runtime-abort helper.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "internal.h"

static _Thread_local hipError_t last_error = hipSuccess;

hipError_t sh_ret(hipError_t e)
{
    if (sh_tl_after_teardown)
        e = hipErrorDeinitialized;
    if (e != hipSuccess)
        last_error = e;
    return e;
}

void sh_die(const char *fmt, ...)
{
    char buf[512];
    int n = snprintf(buf, sizeof buf, "simhip: ");
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof buf - 2)
        n = (int)sizeof buf - 2;
    buf[n++] = '\n';
    ssize_t w = write(2, buf, (size_t)n);
    (void)w;
    abort();
}

/* Aliases (hipErrorMemoryAllocation, ...) share a value and are left out. */
#define SH_ERRORS(X)                                                          \
    X(hipSuccess, "no error")                                                 \
    X(hipErrorInvalidValue, "invalid argument")                               \
    X(hipErrorOutOfMemory, "out of memory")                                   \
    X(hipErrorNotInitialized, "initialization error")                         \
    X(hipErrorDeinitialized, "driver shutting down")                          \
    X(hipErrorProfilerDisabled, "profiler disabled while using external profiling tool") \
    X(hipErrorProfilerNotInitialized, "profiler is not initialized")          \
    X(hipErrorProfilerAlreadyStarted, "profiler already started")             \
    X(hipErrorProfilerAlreadyStopped, "profiler already stopped")             \
    X(hipErrorInvalidConfiguration, "invalid configuration argument")         \
    X(hipErrorInvalidPitchValue, "invalid pitch argument")                    \
    X(hipErrorInvalidSymbol, "invalid device symbol")                         \
    X(hipErrorInvalidDevicePointer, "invalid device pointer")                 \
    X(hipErrorInvalidMemcpyDirection, "invalid copy direction for memcpy")    \
    X(hipErrorInsufficientDriver, "driver version is insufficient for runtime version") \
    X(hipErrorMissingConfiguration, "__global__ function call is not configured") \
    X(hipErrorPriorLaunchFailure, "unspecified launch failure in prior launch") \
    X(hipErrorInvalidDeviceFunction, "invalid device function")               \
    X(hipErrorNoDevice, "no ROCm-capable device is detected")                 \
    X(hipErrorInvalidDevice, "invalid device ordinal")                        \
    X(hipErrorInvalidImage, "device kernel image is invalid")                 \
    X(hipErrorInvalidContext, "invalid device context")                       \
    X(hipErrorContextAlreadyCurrent, "context is already current context")    \
    X(hipErrorMapFailed, "mapping of buffer object failed")                   \
    X(hipErrorUnmapFailed, "unmapping of buffer object failed")               \
    X(hipErrorArrayIsMapped, "array is mapped")                               \
    X(hipErrorAlreadyMapped, "resource already mapped")                       \
    X(hipErrorNoBinaryForGpu, "no kernel image is available for execution on the device") \
    X(hipErrorAlreadyAcquired, "resource already acquired")                   \
    X(hipErrorNotMapped, "resource not mapped")                               \
    X(hipErrorNotMappedAsArray, "resource not mapped as array")               \
    X(hipErrorNotMappedAsPointer, "resource not mapped as pointer")           \
    X(hipErrorECCNotCorrectable, "uncorrectable ECC error encountered")       \
    X(hipErrorUnsupportedLimit, "limit is not supported on this architecture") \
    X(hipErrorContextAlreadyInUse, "exclusive-thread device already in use by a different thread") \
    X(hipErrorPeerAccessUnsupported, "peer access is not supported between these two devices") \
    X(hipErrorInvalidKernelFile, "invalid kernel file")                       \
    X(hipErrorInvalidGraphicsContext, "invalid OpenGL or DirectX context")    \
    X(hipErrorInvalidSource, "device kernel image is invalid")                \
    X(hipErrorFileNotFound, "file not found")                                 \
    X(hipErrorSharedObjectSymbolNotFound, "shared object symbol not found")   \
    X(hipErrorSharedObjectInitFailed, "shared object initialization failed")  \
    X(hipErrorOperatingSystem, "OS call failed or operation not supported on this OS") \
    X(hipErrorInvalidHandle, "invalid resource handle")                       \
    X(hipErrorIllegalState, "the operation cannot be performed in the present state") \
    X(hipErrorNotFound, "named symbol not found")                             \
    X(hipErrorNotReady, "device not ready")                                   \
    X(hipErrorIllegalAddress, "an illegal memory access was encountered")     \
    X(hipErrorLaunchOutOfResources, "too many resources requested for launch") \
    X(hipErrorLaunchTimeOut, "the launch timed out and was terminated")       \
    X(hipErrorPeerAccessAlreadyEnabled, "peer access is already enabled")     \
    X(hipErrorPeerAccessNotEnabled, "peer access has not been enabled")       \
    X(hipErrorSetOnActiveProcess, "cannot set while device is active in this process") \
    X(hipErrorContextIsDestroyed, "context is destroyed")                     \
    X(hipErrorAssert, "device-side assert triggered")                         \
    X(hipErrorHostMemoryAlreadyRegistered, "part or all of the requested memory range is already mapped") \
    X(hipErrorHostMemoryNotRegistered, "pointer does not correspond to a registered memory region") \
    X(hipErrorLaunchFailure, "unspecified launch failure")                    \
    X(hipErrorCooperativeLaunchTooLarge, "too many blocks in cooperative launch") \
    X(hipErrorNotSupported, "operation not supported")                        \
    X(hipErrorStreamCaptureUnsupported, "operation not permitted when stream is capturing") \
    X(hipErrorStreamCaptureInvalidated, "operation failed due to a previous error during capture") \
    X(hipErrorStreamCaptureMerge, "operation would result in a merge of separate capture sequences") \
    X(hipErrorStreamCaptureUnmatched, "capture was not ended in the same stream as it began") \
    X(hipErrorStreamCaptureUnjoined, "capturing stream has unjoined work")    \
    X(hipErrorStreamCaptureIsolation, "dependency created on uncaptured work in another stream") \
    X(hipErrorStreamCaptureImplicit, "operation would make the legacy stream depend on a capturing blocking stream") \
    X(hipErrorCapturedEvent, "operation not permitted on an event last recorded in a capturing stream") \
    X(hipErrorStreamCaptureWrongThread, "attempt to terminate a thread-local capture sequence from another thread") \
    X(hipErrorGraphExecUpdateFailure, "the graph update was not performed because it included changes which violated constraints specific to instantiated graph update") \
    X(hipErrorUnknown, "unknown error")                                       \
    X(hipErrorRuntimeMemory, "HSA runtime memory call returned error")        \
    X(hipErrorRuntimeOther, "HSA runtime call other than memory returned error")

const char *sh_error_name(hipError_t e)
{
    switch (e) {
#define X(name, str) case name: return #name;
        SH_ERRORS(X)
#undef X
    default:
        return "hipErrorUnknown";
    }
}

const char *sh_error_string(hipError_t e)
{
    switch (e) {
#define X(name, str) case name: return str;
        SH_ERRORS(X)
#undef X
    default:
        return "unknown error";
    }
}

const char *hipGetErrorName(hipError_t e)
{
    return sh_error_name(e);
}

const char *hipGetErrorString(hipError_t e)
{
    return sh_error_string(e);
}

hipError_t hipGetLastError(void)
{
    hipError_t e = last_error;
    last_error = hipSuccess;
    return e;
}

hipError_t hipPeekAtLastError(void)
{
    return last_error;
}

/* What a function simhip does not model answers (unmodelled.c). */
int sh_unmodelled(void)
{
    sh_init();
    return (int)sh_ret(hipErrorNotSupported);
}
