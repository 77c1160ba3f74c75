/* free/realloc/munmap preserve errno (glibc >= 2.33 free does) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include "hip_check.h"
int main(void)
{
    char *p = aligned_alloc(4096, 65536);
    hipHostRegister(p, 65536, 0);           /* registry non-empty */
    char *q = malloc(100);
    errno = 1234; free(q); printf("free errno %d\n", errno);
    errno = 1234; free(NULL); printf("freeNULL errno %d\n", errno);
    q = malloc(10000);
    errno = 1234; q = realloc(q, 20000); printf("realloc errno %d\n", errno);
    free(q);
    void *m = mmap(NULL, 8192, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    errno = 1234; int r = munmap(m, 8192); printf("munmap %d errno %d\n", r, errno);
    errno = 0; r = munmap((char *)m + 1, 8192); printf("munmap unaligned %d errno %d\n", r, errno);
    errno = 0; r = madvise((char *)p + 1, 4096, MADV_DONTNEED); printf("madvise unaligned %d errno %d\n", r, errno);
    errno = 0; r = madvise(p, 4096, 12345); printf("madvise bad %d errno %d\n", r, errno);
    errno = 0; void *x = mremap(p, 65536, 4096, 0); printf("mremap shrink %s errno %d\n", x == MAP_FAILED ? "FAILED" : (x == p ? "same" : "other"), errno);
    errno = 1234; hipHostUnregister(p); printf("unreg errno %d\n", errno);
    errno = 1234; free(p); printf("free reg errno %d\n", errno);
    return 0;
}
