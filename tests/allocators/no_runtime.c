/* no_runtime - a program with no GPU runtime that registers nothing, linked
 * with a library that exports one HIP name (libstub_hip.so): it prints
 * that name's answer and exits 0. safepin has nothing to protect in it and
 * must say nothing: no free-not-hooked warning, no summary, no report. */
#include <stdio.h>

const char *hipGetErrorName(int e);

int main(void)
{
    printf("%s\n", hipGetErrorName(0));
    return 0;
}
