/*
 * leak_at_exit.c - a buffer pinned and never unpinned: the process exits
 * with it registered. Harmless on its own (the driver drops it at exit),
 * so the bare run is clean; safepin reports it (leak-at-exit).
 */
#include "legacy_cuda.h"

#define N 4096

int main(void)
{
    lc_init();
    static int buf[N];
    CHECK(cuMemHostRegister_v2(buf, sizeof buf, 0));
    printf("OK\n");
    return 0;
}
