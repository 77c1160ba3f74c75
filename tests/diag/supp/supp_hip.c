/*
 * supp_hip.c - the program of tests/diag/suppressions.sh (HIP, simhip):
 *   supp_hip keep         libsuppholder_hip.so registers a buffer, kept until exit
 *   supp_hip double       a double unregister in this program
 *   supp_hip keep-double  both
 *   supp_hip cache        the library's fake_CachingHostAllocator_allocate keeps one
 *   supp_hip clean        register and unregister: nothing to say
 *   supp_hip torch        the stand-in libtorch_cuda.so's caching allocator keeps one
 * Prints "OK" and exits 0 when every call answered as expected.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hip/hip_runtime_api.h>

void *supp_holder_keep(size_t size);
void *fake_CachingHostAllocator_allocate(size_t size);
void *torch_standin_pin(size_t size);

static int twice(void)
{
    static char buf[8192] __attribute__((aligned(4096)));
    if (hipHostRegister(buf, sizeof buf, 0) != hipSuccess || hipHostUnregister(buf) != hipSuccess)
        return 0;
    return hipHostUnregister(buf) != hipSuccess; /* the second: an error answer */
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "keep";
    int ok = 1;
    if (strcmp(mode, "keep") == 0 || strcmp(mode, "keep-double") == 0)
        ok = supp_holder_keep(1 << 20) != NULL;
    if (strcmp(mode, "double") == 0 || strcmp(mode, "keep-double") == 0)
        ok = ok && twice();
    if (strcmp(mode, "cache") == 0)
        ok = fake_CachingHostAllocator_allocate(1 << 20) != NULL;
    if (strcmp(mode, "torch") == 0)
        ok = torch_standin_pin(1 << 20) != NULL;
    if (strcmp(mode, "clean") == 0) {
        char *p = malloc(1 << 16);
        ok = p && hipHostRegister(p, 1 << 16, 0) == hipSuccess && hipHostUnregister(p) == hipSuccess;
        free(p);
    }
    if (!ok) {
        fprintf(stderr, "supp_hip %s: a call failed\n", mode);
        return 1;
    }
    printf("OK\n");
    return 0;
}
