/*
 * no_shims.c - for test binaries that link the library's logic
 * (libsafepin_core.a) without its exports (the faces' *_shims.c): the
 * faces' tables (hip/hip_face.c, cuda/cuda_face.c) name their shim look-ups,
 * and here there is no shim to hand out. Valid C and C++.
 */
#ifdef __cplusplus
extern "C" {
#endif

void *sp_shim_for(const char *name);
void *sp_cuda_shim_for(const char *name);

void *sp_shim_for(const char *name)
{
    (void)name;
    return 0;
}

void *sp_cuda_shim_for(const char *name)
{
    (void)name;
    return 0;
}

#ifdef __cplusplus
}
#endif
