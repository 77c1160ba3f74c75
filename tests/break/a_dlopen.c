/* runtime loaded with dlopen, used, dlclosed with a pending release, reopened */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
typedef int (*reg_t)(void *, size_t, unsigned);
typedef int (*unreg_t)(void *);
typedef int (*sync_t)(void);
int main(int argc, char **argv)
{
    const char *so = argc > 1 ? argv[1] : "libamdhip64.so.5";
    for (int round = 0; round < 3; round++) {
        void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
        if (!h) { printf("dlopen failed\n"); return 1; }
        reg_t r = (reg_t)dlsym(h, "hipHostRegister");
        unreg_t u = (unreg_t)dlsym(h, "hipHostUnregister");
        sync_t s = (sync_t)dlsym(h, "hipDeviceSynchronize");
        char *p = aligned_alloc(4096, 1 << 20);
        memset(p, round, 1 << 20);
        int e1 = r(p, 1 << 20, 0);
        int e2 = u(p);
        int e3 = u(p);
        free(p);
        int e4 = s();
        printf("round %d: %d %d %d %d close %d\n", round, e1, e2, e3 != 0, e4, dlclose(h));
    }
    return 0;
}
