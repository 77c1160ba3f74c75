/* mock_hip.c - a unit test's stand-in for the HIP runtime: the three
 * functions a program under test calls, counting the calls, and nothing
 * else a runtime has (libmock_hip.so, which mock_runtime links). */
#include <stddef.h>

int mock_calls;

int hipHostRegister(void *p, size_t n, unsigned f)
{
    (void)p;
    (void)n;
    (void)f;
    return mock_calls++, 0;
}

int hipHostUnregister(void *p)
{
    (void)p;
    return mock_calls++, 0;
}

int hipFree(void *p)
{
    (void)p;
    return mock_calls++, 0;
}
