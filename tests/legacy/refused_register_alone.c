/*
 * refused_register_alone - a register the runtime refuses leaves the
 * process's threads as they were.
 *
 * A process whose registers are all refused has nothing to release: a
 * thread started for it is a risk the program never took. In a clone()
 * child without CLONE_VM the CUDA driver answers every call with an error;
 * a thread started there by the first register kept the child (whose last
 * thread of its own ends with SYS_exit) from ending on a real GPU.
 *
 * The program counts its threads after a first runtime call, registers a
 * PROT_NONE page (the runtime refuses it) and counts again: the same count,
 * as bare. Then a register that succeeds, for the contrast.
 */
#include <dirent.h>
#include <sys/mman.h>
#include "legacy.h"

static int threads(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

int main(void)
{
    int count = 0;
    CHECK(hipGetDeviceCount(&count));
    int before = threads();
    long page = sysconf(_SC_PAGESIZE);
    void *none = mmap(NULL, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (none == MAP_FAILED)
        return 2;
    hipError_t e = hipHostRegister(none, page, 0);
    if (e == hipSuccess) {
        fprintf(stderr, "the runtime registered a PROT_NONE page\n");
        (*legacy_failures())++;
        (void)hipHostUnregister(none);
    }
    int after = threads();
    if (after != before) {
        fprintf(stderr, "%d threads before a refused register, %d after it\n", before, after);
        (*legacy_failures())++;
    }
    munmap(none, page);
    char *buf = aligned_alloc(page, page);
    if (!buf)
        return 2;
    CHECK(hipHostRegister(buf, page, 0));
    CHECK(hipHostUnregister(buf));
    free(buf);
    return legacy_finish();
}
