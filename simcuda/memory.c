/*
 * memory.c - allocations, registration and pointer attributes, over
 * simhip's range table in its CUDA face (712 on any overlap, 1 for an
 * interior unregister, pinned pages kept after free/munmap: see
 * simhip/register.c and simhip/access.c).
 *
 * cuMemHostUnregister, cuMemFree_v2 and cuMemFreeHost wait for the whole
 * device while holding the driver lock (another thread's launch stalls).
 * Inside a host function they, register and alloc return 800 and change
 * nothing.
 */
#include "sc_internal.h"

hipError_t hipMalloc(void **ptr, size_t size);
hipError_t hipFree(void *ptr);
hipError_t hipHostMalloc(void **ptr, size_t size, unsigned int flags);
hipError_t hipHostFree(void *ptr);
hipError_t hipHostRegister(void *hostPtr, size_t sizeBytes, unsigned int flags);
hipError_t hipHostUnregister(void *hostPtr);
hipError_t hipHostGetFlags(unsigned int *flagsPtr, void *hostPtr);

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
    CUresult e = sc_enter(true);
    if (e != CUDA_SUCCESS)
        return e;
    if (sc_in_host_fn())
        return CUDA_ERROR_NOT_PERMITTED;
    if (!dptr || bytesize == 0)
        return CUDA_ERROR_INVALID_VALUE;
    void *p = NULL;
    e = sc_res(hipMalloc(&p, bytesize));
    if (e == CUDA_SUCCESS)
        *dptr = (CUdeviceptr)(uintptr_t)p;
    return e;
}

/* Waits for the whole device under the driver lock. A registered host
 * pointer is an invalid value. */
CUresult cuMemFree_v2(CUdeviceptr dptr)
{
    CUresult e = sc_enter(false);
    if (e != CUDA_SUCCESS)
        return e;
    if (sc_in_host_fn())
        return CUDA_ERROR_NOT_PERMITTED;
    if (!dptr)
        return CUDA_SUCCESS;
    sc_drv_hold();
    e = sc_res(hipFree((void *)(uintptr_t)dptr));
    sc_drv_release();
    return e;
}

CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
    CUresult e = sc_enter(true);
    if (e != CUDA_SUCCESS)
        return e;
    if (sc_in_host_fn())
        return CUDA_ERROR_NOT_PERMITTED;
    if (!pp || bytesize == 0 || (Flags & ~7u))
        return CUDA_ERROR_INVALID_VALUE;
    return sc_res(hipHostMalloc(pp, bytesize, Flags));
}

CUresult cuMemFreeHost(void *p)
{
    CUresult e = sc_enter(false);
    if (e != CUDA_SUCCESS)
        return e;
    if (sc_in_host_fn())
        return CUDA_ERROR_NOT_PERMITTED;
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    sc_drv_hold();
    e = sc_res(hipHostFree(p));
    sc_drv_release();
    return e;
}

/* Never blocks on the device. 712 when any byte is already registered
 * (an identical range too: no nesting); 1 for NULL or size 0. */
static CUresult host_register(void *p, size_t bytesize, unsigned int Flags)
{
    CUresult e = sc_enter(true);
    if (e != CUDA_SUCCESS)
        return e;
    if (sc_in_host_fn())
        return CUDA_ERROR_NOT_PERMITTED;
    if (!p || bytesize == 0 || (Flags & ~0xfu))
        return CUDA_ERROR_INVALID_VALUE;
    sc_drv_gate();
    return sc_res(hipHostRegister(p, bytesize, Flags));
}

CUresult cuMemHostRegister(void *p, size_t bytesize, unsigned int Flags)
{
    return host_register(p, bytesize, Flags);
}

CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags)
{
    return host_register(p, bytesize, Flags);
}

/* Waits for every stream of the device (used the range or not) while
 * holding the driver lock. 800 in a host function (the range stays
 * registered), 1 for NULL or an interior pointer (the range keeps
 * working), 713 for memory not registered (or already released), 900
 * during another thread's global capture. Needs no current context. */
CUresult cuMemHostUnregister(void *p)
{
    CUresult e = sc_enter(false);
    if (e != CUDA_SUCCESS)
        return e;
    if (sc_in_host_fn())
        return CUDA_ERROR_NOT_PERMITTED;
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    sc_drv_hold();
    e = sc_res(hipHostUnregister(p));
    sc_drv_release();
    return e;
}

/* The device address of registered / cuMemHostAlloc memory is the host
 * address. */
CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p, unsigned int Flags)
{
    CUresult e = sc_enter(true);
    if (e != CUDA_SUCCESS)
        return e;
    if (!pdptr || !p || Flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    struct sh_range r;
    if (!sh_mem_lookup(p, &r) || r.kind == R_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    *pdptr = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}

CUresult cuMemHostGetFlags(unsigned int *pFlags, void *p)
{
    CUresult e = sc_enter(true);
    if (e != CUDA_SUCCESS)
        return e;
    return sc_res(hipHostGetFlags(pFlags, p));
}

/* ---- pointer attributes ------------------------------------------------- */

/* One attribute of a known range (found) or of unknown memory (defaults,
 * as cuPointerGetAttributes writes them). */
static CUresult attr_of(void *data, CUpointer_attribute a, uintptr_t p, const struct sh_range *r,
                        bool found)
{
    bool dev = found && r->kind == R_DEVICE;
    switch (a) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
        *(CUcontext *)data = found ? (CUcontext)r->owner : NULL;
        break;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        *(unsigned int *)data = !found ? 0u : dev ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
        break;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
        *(CUdeviceptr *)data = found ? (CUdeviceptr)p : 0;
        break;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        if (dev)
            return CUDA_ERROR_INVALID_VALUE;
        *(void **)data = found ? (void *)p : NULL;
        break;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
        *(unsigned long long *)data = found ? (unsigned long long)r->base : 0;
        break;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
        *(int *)data = 0;
        break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
        *(int *)data = found ? r->device : -2;
        break;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
        *(CUdeviceptr *)data = found ? (CUdeviceptr)r->base : 0;
        break;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
        *(size_t *)data = found ? r->size : 0;
        break;
    case CU_POINTER_ATTRIBUTE_MAPPED:
        *(int *)data = found;
        break;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

/* Unknown (or unregistered) memory: CUDA_ERROR_INVALID_VALUE. */
CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
{
    CUresult e = sc_enter(false);
    if (e != CUDA_SUCCESS)
        return e;
    if (!data || !ptr)
        return CUDA_ERROR_INVALID_VALUE;
    struct sh_range r;
    if (!sh_mem_lookup((const void *)(uintptr_t)ptr, &r))
        return CUDA_ERROR_INVALID_VALUE;
    return attr_of(data, attribute, (uintptr_t)ptr, &r, true);
}

/* Unknown memory: CUDA_SUCCESS with default values (NULL, 0, ordinal -2). */
CUresult cuPointerGetAttributes(unsigned int numAttributes, CUpointer_attribute *attributes,
                                void **data, CUdeviceptr ptr)
{
    CUresult e = sc_enter(false);
    if (e != CUDA_SUCCESS)
        return e;
    if (!numAttributes || !attributes || !data)
        return CUDA_ERROR_INVALID_VALUE;
    struct sh_range r;
    bool found = ptr && sh_mem_lookup((const void *)(uintptr_t)ptr, &r);
    for (unsigned i = 0; i < numAttributes; i++) {
        if (!data[i])
            continue;
        if (attributes[i] == CU_POINTER_ATTRIBUTE_HOST_POINTER && found && r.kind == R_DEVICE) {
            *(void **)data[i] = NULL;
            continue;
        }
        e = attr_of(data[i], attributes[i], (uintptr_t)ptr, &r, found);
        if (e != CUDA_SUCCESS)
            return e;
    }
    return CUDA_SUCCESS;
}

/* ---- more allocations -------------------------------------------------------- */

hipError_t hipMallocManaged(void **ptr, size_t size, unsigned int flags);
hipError_t hipMemGetAddressRange(hipDeviceptr_t *pbase, size_t *psize, hipDeviceptr_t dptr);

CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)
{
    return cuMemHostAlloc(pp, bytesize, 0);
}

/* Memory the host and the device both reach; cuMemFree_v2 frees it. */
CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
    CUresult e = sc_enter(true);
    if (e != CUDA_SUCCESS)
        return e;
    if (sc_in_host_fn())
        return CUDA_ERROR_NOT_PERMITTED;
    if (!dptr || bytesize == 0 || (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST))
        return CUDA_ERROR_INVALID_VALUE;
    void *p = NULL;
    e = sc_res(hipMallocManaged(&p, bytesize, flags));
    if (e == CUDA_SUCCESS)
        *dptr = (CUdeviceptr)(uintptr_t)p;
    return e;
}

/* Rows padded to a multiple of 512 bytes. */
CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t width, size_t height,
                            unsigned int elem)
{
    CUresult e = sc_enter(true);
    if (e != CUDA_SUCCESS)
        return e;
    if (!dptr || !pPitch || !width || !height || (elem != 4 && elem != 8 && elem != 16))
        return CUDA_ERROR_INVALID_VALUE;
    size_t pitch = (width + 511) & ~(size_t)511;
    if (height > SIZE_MAX / pitch)
        return CUDA_ERROR_OUT_OF_MEMORY;
    void *p = NULL;
    e = sc_res(hipMalloc(&p, pitch * height));
    if (e == CUDA_SUCCESS) {
        *dptr = (CUdeviceptr)(uintptr_t)p;
        *pPitch = pitch;
    }
    return e;
}

CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
    CUresult e = sc_enter(true);
    if (e != CUDA_SUCCESS)
        return e;
    struct sh_range r;
    if (!dptr || !sh_mem_lookup((const void *)(uintptr_t)dptr, &r))
        return CUDA_ERROR_NOT_FOUND;
    if (pbase)
        *pbase = (CUdeviceptr)r.base;
    if (psize)
        *psize = r.size;
    return CUDA_SUCCESS;
}
