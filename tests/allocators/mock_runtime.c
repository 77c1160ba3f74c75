/* mock_runtime - a unit test linked with a three-function mock of HIP
 * (libmock_hip.so): it registers, unregisters and frees through the mock
 * and prints what the mock answered. Bare it exits 0; in strict mode under
 * safepin it must too: a mock is no runtime error of the program's
 * (safepin says runtime-incomplete, a notice). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

extern int mock_calls;
int hipHostRegister(void *p, size_t n, unsigned f);
int hipHostUnregister(void *p);
int hipFree(void *p);

int main(void)
{
    char *b = aligned_alloc(4096, 8192);
    int r = hipHostRegister(b, 8192, 0);
    int u = hipHostUnregister(b);
    int f = hipFree(NULL);
    free(b);
    printf("register %d unregister %d free %d calls %d\n", r, u, f, mock_calls);
    return r || u || f;
}
