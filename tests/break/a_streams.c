/* many streams created and destroyed; many live at once */
#include <stdio.h>
#include <stdlib.h>
#include "hip_check.h"
int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 100000;
    hipStream_t s;
    int fails = 0;
    for (int i = 0; i < n; i++) {
        if (hipStreamCreate(&s) != hipSuccess) { fails++; continue; }
        if (hipStreamDestroy(s) != hipSuccess) fails++;
    }
    hipStream_t *live = calloc(5000, sizeof *live);
    int made = 0;
    for (int i = 0; i < 5000; i++) if (hipStreamCreate(&live[i]) == hipSuccess) made++;
    char *p = aligned_alloc(4096, 65536);
    hipError_t e1 = hipHostRegister(p, 65536, 0);
    hipError_t e2 = hipHostUnregister(p);
    for (int i = 0; i < 5000; i++) hipStreamDestroy(live[i]);
    hipError_t e3 = hipStreamDestroy(live[0]);
    printf("fails %d made %d reg %d unreg %d redestroy %d\n", fails, made, e1, e2, e3 != 0);
    free(p);
    return 0;
}
