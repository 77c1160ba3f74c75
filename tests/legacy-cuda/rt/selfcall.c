/* selfcall.c - a library that defines cudaHostUnregister and calls it
 * itself, through its own exported symbol (self_call.c), as a library built
 * without -Bsymbolic does: it counts the calls and unpins nothing. */
int selfcall_calls;

int cudaHostUnregister(void *p)
{
    (void)p;
    return ++selfcall_calls;
}

/* Two calls of its own; the sum of their answers. */
int selfcall_twice(void *p)
{
    int a = cudaHostUnregister(p);
    int b = cudaHostUnregister(p);
    return a + b;
}
