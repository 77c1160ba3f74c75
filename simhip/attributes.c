/*
 * attributes.c - what the runtime answers about a pointer: its device
 * pointer and flags, its attributes (one or all), its allocation's range.
 * An attribute query of registered memory holds the range for
 * ATTR_WINDOW_US, as the runtime's lookup does: an unregister meanwhile
 * aborts (register.c).
 */
#include <string.h>

#include "memory_int.h"

#define ATTR_WINDOW_US 20

hipError_t hipHostGetDevicePointer(void **devPtr, void *hstPtr, unsigned int flags)
{
    sh_init();
    if (!devPtr || !hstPtr || flags != 0)
        return sh_ret(hipErrorInvalidValue);
    pthread_rwlock_rdlock(&sh_mem_lock);
    struct sh_range *r = sh_mem_find_containing((uintptr_t)hstPtr);
    bool ok = r && r->kind != R_DEVICE;
    pthread_rwlock_unlock(&sh_mem_lock);
    if (!ok)
        return sh_ret(hipErrorInvalidValue);
    *devPtr = hstPtr;
    return hipSuccess;
}

hipError_t hipHostGetFlags(unsigned int *flagsPtr, void *hostPtr)
{
    sh_init();
    if (!flagsPtr || !hostPtr)
        return sh_ret(hipErrorInvalidValue);
    pthread_rwlock_rdlock(&sh_mem_lock);
    struct sh_range *r = sh_mem_find_containing((uintptr_t)hostPtr);
    bool ok = r && r->kind != R_DEVICE;
    unsigned flags = ok ? r->flags : 0;
    pthread_rwlock_unlock(&sh_mem_lock);
    if (!ok)
        return sh_ret(hipErrorInvalidValue);
    *flagsPtr = flags;
    return hipSuccess;
}

/* The memory-type values of the personality's ABI: 5.x (legacy, current:
 * host 0, device 1) or 6.x (rocm7: unregistered 0, host 1, device 2). */
static enum hipMemoryType memory_type(bool device)
{
    if (sh_cfg.personality == SH_ROCM7)
        return (enum hipMemoryType)(device ? 2 : 1);
    return device ? hipMemoryTypeDevice : hipMemoryTypeHost;
}

/*
 * Unregistered host memory: legacy (5.x) returns hipErrorInvalidValue;
 * current and rocm7 (6.x) return hipSuccess with what 6.x reports for
 * hipMemoryTypeUnregistered (0): memoryType 0, device -1, both pointers
 * NULL, isManaged 0, allocationFlags 0. (In current's 5.x values 0 also
 * reads as host; rocm7 uses the 6.x values throughout.)
 */
hipError_t hipPointerGetAttributes(hipPointerAttribute_t *attributes, const void *ptr)
{
    sh_init();
    if (!attributes || !ptr)
        return sh_ret(hipErrorInvalidValue);
    uintptr_t p = (uintptr_t)ptr;
    hipPointerAttribute_t a;
    memset(&a, 0, sizeof a);

    pthread_rwlock_wrlock(&sh_mem_lock);
    struct sh_range *r = sh_mem_find_containing(p);
    if (!r) {
        pthread_rwlock_unlock(&sh_mem_lock);
        /* The runtime's lookup costs as much for unknown memory: a thread
         * hammering attribute queries never outruns a register loop. */
        sh_sleep_us(ATTR_WINDOW_US);
        if (sh_cfg.personality == SH_LEGACY)
            return sh_ret(hipErrorInvalidValue);
        a.memoryType = (enum hipMemoryType)0;
        a.device = -1;
        *attributes = a;
        return hipSuccess;
    }
    if (r->unregistering)
        sh_die("runtime abort: hipPointerGetAttributes raced hipHostUnregister on 0x%lx",
               (unsigned long)r->base);
    a.device = r->device;
    a.allocationFlags = r->flags;
    a.devicePointer = (void *)(r->base + (p - r->base));
    if (r->kind == R_DEVICE) {
        a.memoryType = memory_type(true);
    } else {
        a.memoryType = memory_type(false);
        a.hostPointer = (void *)p;
    }
    bool window = r->kind == R_REGISTERED;
    if (window)
        r->attr_busy++;
    pthread_rwlock_unlock(&sh_mem_lock);

    if (window) {
        /* The runtime's lookup holds the object this long; an unregister
         * arriving meanwhile finds attr_busy and aborts. */
        sh_sleep_us(ATTR_WINDOW_US);
        pthread_rwlock_wrlock(&sh_mem_lock);
        r->attr_busy--;
        pthread_rwlock_unlock(&sh_mem_lock);
    }
    *attributes = a;
    return hipSuccess;
}

hipError_t hipMemGetAddressRange(hipDeviceptr_t *pbase, size_t *psize, hipDeviceptr_t dptr)
{
    sh_init();
    struct sh_range r;
    if (!dptr || !sh_mem_lookup(dptr, &r))
        return sh_ret(hipErrorNotFound);
    if (pbase)
        *pbase = (hipDeviceptr_t)r.base;
    if (psize)
        *psize = r.size;
    return hipSuccess;
}

/* One attribute of known memory; unknown memory is an invalid value. */
hipError_t hipPointerGetAttribute(void *data, hipPointer_attribute attribute, hipDeviceptr_t ptr)
{
    sh_init();
    struct sh_range r;
    if (!data || !ptr || !sh_mem_lookup(ptr, &r))
        return sh_ret(hipErrorInvalidValue);
    uintptr_t p = (uintptr_t)ptr;
    bool dev = r.kind == R_DEVICE;
    switch (attribute) {
    case HIP_POINTER_ATTRIBUTE_MEMORY_TYPE:
        *(unsigned *)data = (unsigned)memory_type(dev);
        break;
    case HIP_POINTER_ATTRIBUTE_DEVICE_POINTER:
        *(void **)data = (void *)p;
        break;
    case HIP_POINTER_ATTRIBUTE_HOST_POINTER:
        *(void **)data = dev ? NULL : (void *)p;
        break;
    case HIP_POINTER_ATTRIBUTE_IS_MANAGED:
        *(int *)data = r.managed;
        break;
    case HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
        *(int *)data = r.device;
        break;
    case HIP_POINTER_ATTRIBUTE_RANGE_START_ADDR:
        *(void **)data = (void *)r.base;
        break;
    case HIP_POINTER_ATTRIBUTE_RANGE_SIZE:
        *(size_t *)data = r.size;
        break;
    case HIP_POINTER_ATTRIBUTE_MAPPED:
        *(int *)data = 1;
        break;
    case HIP_POINTER_ATTRIBUTE_BUFFER_ID:
        *(unsigned long long *)data = (unsigned long long)r.base;
        break;
    default:
        return sh_ret(hipErrorInvalidValue);
    }
    return hipSuccess;
}
