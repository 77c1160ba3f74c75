/* hipGetProcAddress and dlsym on a handle: every hooked name, bad arguments */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include "hip_check.h"
#include "simhip.h"
typedef hipError_t (*gpa_t)(const char *, void **, int, uint64_t, int *);
int main(void)
{
    void *h = dlopen("libamdhip64.so.5", RTLD_NOW);
    gpa_t gpa = (gpa_t)dlsym(h, "hipGetProcAddress");
    printf("gpa %d\n", gpa != NULL);
    if (!gpa) return 0;
    void *fn = (void *)1; int st = -7;
    hipError_t e;
    e = gpa(NULL, &fn, 600, 0, &st); printf("null sym %d st %d fn %d\n", e, st, fn == NULL);
    fn = (void *)1; st = -7;
    e = gpa("hipHostRegister", NULL, 600, 0, &st); printf("null pfn %d st %d\n", e, st);
    e = gpa("hipHostRegister", &fn, 600, 0, NULL); printf("null status %d fn %d\n", e, fn != NULL);
    fn = (void *)1; st = -7;
    e = gpa("hipNoSuch", &fn, 600, 0, &st); printf("nosuch %d st %d fn %d\n", e, st, fn == NULL);
    fn = (void *)1; st = -7;
    e = gpa("hipHostRegister", &fn, 0, 0, &st); printf("ver0 %d st %d fn %d\n", e, st, fn == NULL);
    fn = (void *)1; st = -7;
    e = gpa("hipHostRegister", &fn, 600, 12345, &st); printf("badflags %d st %d fn %d\n", e, st, fn == NULL);
    /* use it: register via proc addr, unregister via plain */
    fn = NULL;
    gpa("hipHostRegister", &fn, 600, 0, &st);
    char *p = aligned_alloc(4096, 65536);
    hipError_t e1 = ((hipError_t(*)(void *, size_t, unsigned))fn)(p, 65536, 0);
    hipError_t e2 = hipHostUnregister(p);
    printf("via gpa %d %d\n", e1, e2);
    void *d1 = dlsym(h, "hipHostUnregister");
    void *d2 = dlsym(RTLD_DEFAULT, "hipHostUnregister");
    void *d3 = dlsym(h, "hipHostUnregister@hip_4.2");
    printf("dlsym h %d default %d same %d versioned-name %d\n", d1 != NULL, d2 != NULL, d1 == d2, d3 != NULL);
    e1 = hipHostRegister(p, 65536, 0);
    e2 = ((hipError_t(*)(void *))d1)(p);
    printf("dlsym unreg %d %d\n", e1, e2);
    free(p);
    return 0;
}
