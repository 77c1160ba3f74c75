/* The HIP runtime loaded with dlmopen, closed while a release is pending. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
typedef int (*reg_t)(void *, size_t, unsigned);
typedef int (*unreg_t)(void *);
typedef int (*launch_t)(void);
int main(int argc, char **argv) {
    void *h = argc > 1 ? dlopen("libamdhip64.so.5", RTLD_NOW | RTLD_LOCAL) : dlmopen(LM_ID_NEWLM, "libamdhip64.so.5", RTLD_NOW);
    if (!h) { printf("dlmopen: %s\n", dlerror()); return 2; }
    reg_t reg = (reg_t)dlsym(h, "hipHostRegister"); unreg_t unreg = (unreg_t)dlsym(h, "hipHostUnregister");
    size_t n = 1 << 20; char *p = mmap(NULL, n, 3, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0); memset(p, 1, n);
    int total = 0;
    for (int i = 0; i < 50; i++) { total += reg(p, n, 0); total += unreg(p); }
    printf("calls=%d\n", total);
    printf("dlclose=%d\n", dlclose(h));
    printf("munmap=%d\n", munmap(p, n));
    return 0;
}
