/* Look-ups: cuGetProcAddress versions/flags, unknown names, dlsym before cuInit, RTLD_LOCAL. */
#define _GNU_SOURCE
#include "simcuda.h"
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
typedef CUresult (*gpa4)(const char*, void**, int, cuuint64_t);
typedef CUresult (*gpa5)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
typedef CUresult (*reg_t)(void*, size_t, unsigned);
typedef CUresult (*unreg_t)(void*);
int main(void) {
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) { printf("dlopen fail\n"); return 1; }
    gpa5 g5 = (gpa5)dlsym(h, "cuGetProcAddress_v2");
    gpa4 g4 = (gpa4)dlsym(h, "cuGetProcAddress");
    reg_t r0 = (reg_t)dlsym(h, "cuMemHostRegister_v2");
    printf("have g5=%d g4=%d reg=%d\n", !!g5, !!g4, !!r0);
    const char *names[] = {"cuMemHostRegister", "cuMemHostUnregister", "cuGetProcAddress", "cuNoSuchThing", "", "cuStreamBeginCapture", "cuMemFree", "cuInit", "cuStreamDestroy", "cuCtxDestroy", "cuLaunchHostFunc", "cuMemcpyHtoDAsync"};
    int vers[] = {0, 11020, 11030, 12000, 13000, -1, 99999};
    unsigned long flags[] = {0, 1, 2, 4};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        for (size_t v = 0; v < sizeof vers / sizeof *vers; v++)
            for (size_t f = 0; f < 4; f++) {
                void *fn = (void*)1; CUdriverProcAddressQueryResult st = 77;
                CUresult e = g5(names[i], &fn, vers[v], flags[f], &st);
                void *fn4 = (void*)1; CUresult e4 = g4 ? g4(names[i], &fn4, vers[v], flags[f]) : -1;
                Dl_info di; const char *sn = "-", *sn4 = "-";
                if (e == 0 && fn && fn != (void*)1 && dladdr(fn, &di) && di.dli_sname) sn = di.dli_sname;
                if (e4 == 0 && fn4 && fn4 != (void*)1 && dladdr(fn4, &di) && di.dli_sname) sn4 = di.dli_sname;
                printf("%s v%d f%lu: e=%d st=%d fn=%s | e4=%d fn4=%s\n", names[i], vers[v], flags[f], e, st, sn, e4, sn4);
            }
    void *fn = NULL; CUdriverProcAddressQueryResult st;
    printf("null_sym=%d\n", g5(NULL, &fn, 12000, 0, &st));
    printf("null_pfn=%d\n", g5("cuInit", NULL, 12000, 0, &st));
    printf("null_status=%d\n", g5("cuInit", &fn, 12000, 0, NULL));
    /* Use the looked-up functions. */
    CUresult (*init)(unsigned) = NULL; g5("cuInit", (void**)&init, 12000, 0, &st); init(0);
    CUresult (*dg)(CUdevice*, int); g5("cuDeviceGet", (void**)&dg, 12000, 0, &st); CUdevice d; dg(&d, 0);
    CUresult (*pr)(CUcontext*, CUdevice); g5("cuDevicePrimaryCtxRetain", (void**)&pr, 12000, 0, &st); CUcontext c; pr(&c, d);
    CUresult (*sc)(CUcontext); g5("cuCtxSetCurrent", (void**)&sc, 12000, 0, &st); sc(c);
    reg_t reg; unreg_t unreg; g5("cuMemHostRegister", (void**)&reg, 12000, 0, &st); g5("cuMemHostUnregister", (void**)&unreg, 12000, 0, &st);
    void *p = mmap(NULL, 4096, 3, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0);
    printf("reg=%d reg2=%d unreg=%d unreg2=%d\n", reg(p, 4096, 0), reg(p, 4096, 0), unreg(p), unreg(p));
    /* cuGetProcAddress from cuGetProcAddress at 11030 and use it. */
    gpa4 gg4 = NULL; g5("cuGetProcAddress", (void**)&gg4, 11030, 0, &st);
    reg_t reg4 = NULL; printf("gg4=%d\n", gg4 ? gg4("cuMemHostRegister", (void**)&reg4, 11030, 0) : -5);
    printf("reg4=%d\n", reg4 ? reg4(p, 4096, 0) : -5);
    gpa5 gg5 = NULL; g5("cuGetProcAddress", (void**)&gg5, 12000, 0, &st);
    reg_t reg5 = NULL; printf("gg5=%d\n", gg5 ? gg5("cuMemHostRegister", (void**)&reg5, 12000, 2, &st) : -5);
    printf("reg5=%d (again)\n", reg5 ? reg5(p, 4096, 0) : -5);
    printf("dlclose=%d\n", dlclose(h));
    return 0;
}
