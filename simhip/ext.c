/*
 * ext.c - the simhip.h extension: C "kernels" on streams and checked device
 * accesses. Exported in the version node simhip_ext.
 */
#include "internal.h"

#include <string.h>

hipError_t simhip_launch_kernel(hipStream_t stream, simhipKernel_t fn, void *args);
void simhip_device_read(void *dst, const void *src, size_t n);
void simhip_device_write(void *dst, const void *src, size_t n);
void *simhip_raw_function(const char *name);

hipError_t simhip_launch_kernel(hipStream_t stream, simhipKernel_t fn, void *args)
{
    sh_init();
    if (!fn)
        return sh_ret(hipErrorInvalidValue);
    struct sh_work w = { .kind = W_KERNEL, .kfn = fn, .arg = args, .handle = stream };
    return sh_ret(sh_enqueue_handle(stream, &w, NULL, NULL));
}

/* Device address src -> local dst; faults unless src is device-accessible. */
void simhip_device_read(void *dst, const void *src, size_t n)
{
    sh_init();
    sh_device_copy(dst, src, n, false, true);
}

/* Local src -> device address dst; faults unless dst is device-accessible. */
void simhip_device_write(void *dst, const void *src, size_t n)
{
    sh_init();
    sh_device_copy(dst, src, n, true, false);
}

/* The runtime's own entry point for a few names, reached past every
 * interposer (the library is linked -Bsymbolic-functions, so these are
 * simhip's functions), as a tool's dispatch table reaches a real runtime.
 * Tests use it to ask simhip itself what it has registered, or to play a
 * library that calls the runtime behind safepin's back. NULL for others. */
void *simhip_raw_function(const char *name)
{
    if (!name)
        return NULL;
    if (!strcmp(name, "hipHostRegister"))
        return (void *)hipHostRegister;
    if (!strcmp(name, "hipHostUnregister"))
        return (void *)hipHostUnregister;
    if (!strcmp(name, "hipHostGetDevicePointer"))
        return (void *)hipHostGetDevicePointer;
    return NULL;
}
