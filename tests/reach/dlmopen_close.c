/*
 * dlmopen_close.c - a program that loads the HIP runtime into a link-map
 * namespace of its own (dlmopen LM_ID_NEWLM), registers and unregisters a
 * buffer, closes the runtime at once (the releases may still be pending),
 * then unmaps the buffer.
 *
 * Without safepin this just works. With safepin the runtime must stay
 * loaded while safepin has work for it, found in its own namespace (the
 * reference was once looked for in the base namespace only: the runtime
 * was unloaded and the reaper called a function it had forgotten).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

typedef int (*reg_t)(void *, size_t, unsigned);
typedef int (*unreg_t)(void *);

int main(void)
{
    void *h = dlmopen(LM_ID_NEWLM, "libamdhip64.so.5", RTLD_NOW);
    if (!h) {
        fprintf(stderr, "dlmopen: %s\n", dlerror());
        return 2;
    }
    reg_t reg = (reg_t)dlsym(h, "hipHostRegister");
    unreg_t unreg = (unreg_t)dlsym(h, "hipHostUnregister");
    size_t n = 1 << 20;
    char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (!reg || !unreg || p == MAP_FAILED)
        return 2;
    memset(p, 1, n);
    for (int i = 0; i < 20; i++) {
        int e = reg(p, n, 0), u = unreg(p);
        if (e || u) {
            fprintf(stderr, "round %d: register %d, unregister %d\n", i, e, u);
            return 1;
        }
    }
    if (dlclose(h) != 0) {
        fprintf(stderr, "dlclose: %s\n", dlerror());
        return 1;
    }
    if (munmap(p, n) != 0) {
        perror("munmap");
        return 1;
    }
    printf("OK\n");
    return 0;
}
