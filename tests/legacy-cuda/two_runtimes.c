/*
 * two_runtimes.c - two majors of the shared runtime in one process, as with
 * PyTorch (libcudart.so.12) and CuPy (libcudart.so.13): the program links
 * the stand-in libcudart.so.13, and a library it dlopens (rt/libuser12.so)
 * links libcudart.so.12. Each call of cudaHostUnregister must reach the
 * runtime its caller links (their version nodes say which), also when a
 * preload library defines cudaHostUnregister itself and forwards it.
 */
#include <dlfcn.h>

#include "legacy_cuda.h"
#include "minirt.h"

#define PAGE 4096

static int *counter(void *h, const char *name)
{
    int *c = h ? (int *)dlsym(h, name) : NULL;
    if (!c) {
        fprintf(stderr, "no %s: %s\n", name, dlerror());
        exit(2);
    }
    return c;
}

/* rt/libuser12.so beside this program, by full path: a dlopen interposed by
 * a sanitizer runtime searches that runtime's paths, not this program's. */
static void *open_user(void)
{
    char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 32);
    if (n <= 0)
        return NULL;
    path[n] = 0;
    char *slash = strrchr(path, '/');
    strcpy(slash ? slash + 1 : path, "rt/libuser12.so");
    return dlopen(path, RTLD_NOW | RTLD_LOCAL);
}

int main(void)
{
    lc_init();
    void *user = open_user();
    void *rt12 = dlopen("libcudart.so.12", RTLD_NOW | RTLD_NOLOAD);
    void *rt13 = dlopen("libcudart.so.13", RTLD_NOW | RTLD_NOLOAD);
    int (*user_unregister)(void *) = user ? (int (*)(void *))dlsym(user, "user12_unregister") : NULL;
    if (!user_unregister || !rt12 || !rt13) {
        fprintf(stderr, "the two runtimes are not both loaded: %s\n", dlerror());
        return 2;
    }
    int *c12 = counter(rt12, "minirt_unregister_calls_12");
    int *c13 = counter(rt13, "minirt_unregister_calls_13");
    static char a[PAGE] __attribute__((aligned(PAGE))), b[PAGE] __attribute__((aligned(PAGE)));
    CHECK((CUresult)cudaHostRegister(a, PAGE, 0));
    CHECK((CUresult)cudaHostRegister(b, PAGE, 0));
    CHECK((CUresult)cudaHostUnregister(a));
    CHECK((CUresult)user_unregister(b));
    if (*c13 != 1 || *c12 != 1) {
        fprintf(stderr, "cudaHostUnregister reached the wrong runtime: 13 answered %d calls, 12 answered %d "
                "(want 1 and 1)\n", *c13, *c12);
        return 1;
    }
    printf("OK\n");
    return 0;
}
