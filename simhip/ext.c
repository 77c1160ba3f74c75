/*
 * ext.c - the simhip.h extension: C "kernels" on streams and checked device
 * accesses. Exported in the version node simhip_ext.
 */
#include "internal.h"

hipError_t simhip_launch_kernel(hipStream_t stream, simhipKernel_t fn, void *args);
void simhip_device_read(void *dst, const void *src, size_t n);
void simhip_device_write(void *dst, const void *src, size_t n);

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
