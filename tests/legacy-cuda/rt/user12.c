/* user12.c - a library linked with the stand-in libcudart.so.12 (two_runtimes.c),
 * wrapping the call as Python bindings do: the status is checked after it. */
#include <stdio.h>

#include "minirt.h"

int user12_unregister(void *p)
{
    int e = cudaHostUnregister(p);
    if (e != 0)
        fprintf(stderr, "user12: cudaHostUnregister(%p) returned %d\n", p, e);
    return e;
}
