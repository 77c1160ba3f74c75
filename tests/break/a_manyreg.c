/* many registrations, many threads */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "hip_check.h"
#define T 16
#define R 2000
static int errs[T];
static void *work(void *a)
{
    long t = (long)a;
    char **bufs = malloc(R * sizeof *bufs);
    for (int i = 0; i < R; i++) {
        bufs[i] = aligned_alloc(4096, 4096);
        if (hipHostRegister(bufs[i], 4096, 0) != hipSuccess) errs[t]++;
    }
    for (int i = 0; i < R; i++) {
        if (i % 2) { if (hipHostUnregister(bufs[i]) != hipSuccess) errs[t]++; }
        free(bufs[i]);
    }
    free(bufs);
    return NULL;
}
int main(void)
{
    pthread_t th[T];
    for (long i = 0; i < T; i++) pthread_create(&th[i], 0, work, (void *)i);
    int e = 0;
    for (int i = 0; i < T; i++) { pthread_join(th[i], 0); e += errs[i]; }
    printf("errors %d\n", e);
    return 0;
}
