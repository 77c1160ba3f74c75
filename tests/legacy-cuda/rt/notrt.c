/* notrt.c - a library of the program's own that defines a function named
 * cudaHostUnregister and is not NVIDIA's runtime (a test double, as
 * foreign_unregister.c uses): it counts its calls and unpins nothing. */
int notrt_calls;

int cudaHostUnregister(void *p)
{
    (void)p;
    return ++notrt_calls == 1 ? 0 : 99;
}
