/*
 * dlvsym_next.c - a library that looks a function up with
 * dlvsym(RTLD_NEXT, ...), as a wrapper library reaching "the next" HIP or
 * CUDA definition does: RTLD_NEXT is relative to this library, so the
 * answer depends on which objects were loaded after it. The reach tests
 * (tests/reach/dlvsym_reach.c, tests/reach-cuda/dlvsym_lookup.c) link it
 * (libdlvsym_next.so) and dlopen a copy of it (libdlvsym_next_dl.so).
 */
#include <dlfcn.h>

void *dlvsym_next(const char *name, const char *version);

void *dlvsym_next(const char *name, const char *version)
{
    /* Not a tail call: glibc must see this library as the caller. */
    void *volatile fn = dlvsym(RTLD_NEXT, name, version);
    return fn;
}
