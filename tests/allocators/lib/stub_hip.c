/* stub_hip.c - a library that is no HIP runtime but exports one name a
 * HIP runtime has (as a compatibility stub, a mock or a wrapper library
 * may): libstub_hip.so, which no_runtime links. */
const char *hipGetErrorName(int e)
{
    (void)e;
    return "stub";
}
