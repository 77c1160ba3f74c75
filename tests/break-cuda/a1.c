/* Attacks on the CUDA face: each case prints its codes; bare and preload outputs are compared. */
#include "simcuda.h"
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define P(name, e) printf("%s=%d\n", name, (int)(e))
static CUcontext init(void) { CUdevice d; CUcontext c; cuInit(0); cuDeviceGet(&d,0); cuDevicePrimaryCtxRetain(&c,d); cuCtxSetCurrent(c); return c; }
static void *page(size_t n) { void *p = mmap(NULL,n,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS,-1,0); memset(p,1,n); return p; }

static CUresult hf_rc; static void *hf_p;
static void hf_unreg(void *u) { (void)u; hf_rc = cuMemHostUnregister(hf_p); }
static void hf_reg(void *u) { (void)u; hf_rc = cuMemHostRegister_v2(hf_p, 4096, 0); }
static CUstream hf_s;
static void hf_sdestroy(void *u) { (void)u; hf_rc = cuStreamDestroy_v2(hf_s); }
static void hf_free(void *u) { (void)u; hf_rc = cuMemFree_v2((CUdeviceptr)hf_p); }
static void hf_attr(void *u) { (void)u; unsigned t=0; hf_rc = cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,(CUdeviceptr)hf_p); }
static void hf_ctxdestroy(void *u) { (void)u; CUcontext c; cuCtxGetCurrent(&c); hf_rc = cuCtxDestroy_v2(c); }
static void hf_primreset(void *u) { (void)u; hf_rc = cuDevicePrimaryCtxReset_v2(0); }

static void run_hf(const char *n, CUhostFn fn) {
    hf_rc = -1; CUstream s; cuStreamCreate(&s, 0);
    P(n, cuLaunchHostFunc(s, fn, NULL)); cuStreamSynchronize(s); printf("%s.hf_rc=%d\n", n, hf_rc); cuStreamDestroy_v2(s);
}

int main(int argc, char **argv) {
    const char *c = argc > 1 ? argv[1] : "";
    if (!strcmp(c, "preinit")) {
        void *p = page(4096);
        P("reg_before_init", cuMemHostRegister_v2(p, 4096, 0));
        P("unreg_before_init", cuMemHostUnregister(p));
        P("free_before_init", cuMemFree_v2(0));
        CUstream s = 0; P("screate_before_init", cuStreamCreate(&s, 0));
        P("ctxdestroy_before_init", cuCtxDestroy_v2(NULL));
        P("prim_release_before_init", cuDevicePrimaryCtxRelease_v2(0));
        P("prim_reset_before_init", cuDevicePrimaryCtxReset_v2(0));
        unsigned t; P("attr_before_init", cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)p));
        return 0;
    }
    init();
    if (!strcmp(c, "args")) {
        void *p = page(8192);
        P("reg_null", cuMemHostRegister_v2(NULL, 4096, 0));
        P("reg_size0", cuMemHostRegister_v2(p, 0, 0));
        P("reg_sizemax", cuMemHostRegister_v2(p, SIZE_MAX, 0));
        P("reg_badflags", cuMemHostRegister_v2(p, 4096, 0xff00));
        P("reg_unaligned", cuMemHostRegister_v2((char*)p+3, 100, 0));
        P("unreg_unaligned", cuMemHostUnregister((char*)p+3));
        P("reg_readonly_flag", cuMemHostRegister_v2(p, 4096, 8));
        P("unreg_ro", cuMemHostUnregister(p));
        P("reg_ok", cuMemHostRegister_v2(p, 8192, 0));
        P("reg_again_v1", cuMemHostRegister(p, 8192, 0));
        P("reg_again_diffflags", cuMemHostRegister_v2(p, 8192, 2));
        P("reg_sub", cuMemHostRegister_v2((char*)p+4096, 4096, 0));
        P("unreg_interior", cuMemHostUnregister((char*)p+4096));
        P("unreg_null", cuMemHostUnregister(NULL));
        P("free_reg_host", cuMemFree_v2((CUdeviceptr)p));
        P("free_reg_interior", cuMemFree_v2((CUdeviceptr)p + 100));
        unsigned t = 0;
        P("attr_null_data", cuPointerGetAttribute(NULL, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)p));
        P("attr_badattr", cuPointerGetAttribute(&t, 999, (CUdeviceptr)p));
        P("attrs_zero", cuPointerGetAttributes(0, NULL, NULL, (CUdeviceptr)p));
        P("unreg1", cuMemHostUnregister(p));
        P("unreg2", cuMemHostUnregister(p));
        P("unreg3", cuMemHostUnregister(p));
        P("free_after_unreg", cuMemFree_v2((CUdeviceptr)p));
        t = 77; P("attr_after_unreg", cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)p)); printf("t=%u\n", t);
        unsigned fl=5; P("getflags_after", cuMemHostGetFlags(&fl, p)); 
        CUdeviceptr dp=0; P("getdp_after", cuMemHostGetDevicePointer_v2(&dp, p, 0));
        P("reg_after", cuMemHostRegister_v2(p, 8192, 0));
        P("reg_after_overlap", cuMemHostRegister_v2(p, 4096, 0));
        P("unreg_after", cuMemHostUnregister(p));
        P("reg_stack", 0);
        char stackbuf[8192]; memset(stackbuf, 0, sizeof stackbuf);
        P("unreg_stack", cuMemHostUnregister(stackbuf));
        CUdeviceptr d; cuMemAlloc_v2(&d, 64);
        P("free_dev", cuMemFree_v2(d));
        P("free_dev_again", cuMemFree_v2(d));
        P("free_0", cuMemFree_v2(0));
        P("unreg_devptr", cuMemHostUnregister((void*)(uintptr_t)d));
        void *h = NULL; cuMemHostAlloc(&h, 4096, 0);
        P("reg_hostalloc", cuMemHostRegister_v2(h, 4096, 0));
        P("unreg_hostalloc", cuMemHostUnregister(h));
        P("freehost", cuMemFreeHost(h));
    } else if (!strcmp(c, "streams")) {
        CUstream s; cuStreamCreate(&s, 0);
        P("sdestroy1", cuStreamDestroy_v2(s));
        P("sdestroy_legacy", cuStreamDestroy_v2(CU_STREAM_LEGACY));
        P("sdestroy_null", cuStreamDestroy_v2(NULL));
        P("screate_nullout", cuStreamCreate(NULL, 0));
        P("screate_badflags", cuStreamCreate(&s, 0x70));
        P("screateprio_bad", cuStreamCreateWithPriority(&s, 0, 1000)); cuStreamDestroy_v2(s);
        CUgraph g = NULL;
        P("end_nobegin", cuStreamEndCapture(CU_STREAM_LEGACY, &g));
        P("begin_legacy", cuStreamBeginCapture_v2(CU_STREAM_LEGACY, 0));
        P("begin_null", cuStreamBeginCapture_v2(NULL, 0));
        P("begin_ptsz_null", cuStreamBeginCapture_v2_ptsz(NULL, 0));
        P("end_ptsz_null", cuStreamEndCapture_ptsz(NULL, &g));
        cuStreamCreate(&s, 1);
        P("begin_badmode", cuStreamBeginCapture_v2(s, 7));
        P("begin_ok", cuStreamBeginCapture_v2(s, 0));
        P("begin_twice", cuStreamBeginCapture_v2(s, 0));
        P("end_nullgraph", cuStreamEndCapture(s, NULL));
        P("end_ok", cuStreamEndCapture(s, &g));
        P("end_again", cuStreamEndCapture(s, &g));
        P("hostfn_null", cuLaunchHostFunc(s, NULL, NULL));
        P("cb_null", cuStreamAddCallback(s, NULL, NULL, 0));
        P("cb_badflags", cuStreamAddCallback(s, (CUstreamCallback)hf_unreg, NULL, 1));
        cuStreamSynchronize(s);
        P("sdestroy_nb", cuStreamDestroy_v2(s));
        P("sdestroy_again", cuStreamDestroy(s));
    } else if (!strcmp(c, "hostfn")) {
        hf_p = page(4096);
        cuMemHostRegister_v2(hf_p, 4096, 0);
        run_hf("hf_unreg", hf_unreg);
        run_hf("hf_unreg2", hf_unreg);
        P("main_unreg", cuMemHostUnregister(hf_p));
        run_hf("hf_reg", hf_reg);
        P("main_unreg_after_hfreg", cuMemHostUnregister(hf_p));
        run_hf("hf_free", hf_free);
        run_hf("hf_attr", hf_attr);
        cuStreamCreate(&hf_s, 0);
        run_hf("hf_sdestroy", hf_sdestroy);
        P("sdestroy_after_hf", cuStreamDestroy_v2(hf_s));
    } else if (!strcmp(c, "hfctx")) {
        run_hf("hf_ctxdestroy", hf_ctxdestroy);
    } else if (!strcmp(c, "hfprim")) {
        run_hf("hf_primreset", hf_primreset);
    } else if (!strcmp(c, "ctx")) {
        CUcontext c2; CUdevice d = 0;
        P("ctxcreate", cuCtxCreate_v2(&c2, 0, d));
        void *p = page(4096);
        P("reg_c2", cuMemHostRegister_v2(p, 4096, 0));
        P("ctxdestroy_null", cuCtxDestroy_v2(NULL));
        P("unreg_c2", cuMemHostUnregister(p));
        P("ctxdestroy", cuCtxDestroy_v2(c2));
        P("ctxdestroy_again", cuCtxDestroy_v2(c2));
        P("reg_after_destroy", cuMemHostRegister_v2(p, 4096, 0));
        P("unreg_after_destroy", cuMemHostUnregister(p));
        CUcontext c3; cuCtxCreate_v2(&c3, 0, d);
        P("reg_c3", cuMemHostRegister_v2(p, 4096, 0));
        P("ctxdestroy_c3_live", cuCtxDestroy_v2(c3));
        P("reg_after_c3", cuMemHostRegister_v2(p, 4096, 0));
        P("unreg_after_c3", cuMemHostUnregister(p));
        P("prim_release_bad_dev", cuDevicePrimaryCtxRelease_v2(99));
        P("prim_reset_bad_dev", cuDevicePrimaryCtxReset_v2(-1));
        CUcontext pc; cuDevicePrimaryCtxRetain(&pc, 0); cuCtxSetCurrent(pc);
        P("reg_prim", cuMemHostRegister_v2(p, 4096, 0));
        P("unreg_prim", cuMemHostUnregister(p));
        P("prim_release", cuDevicePrimaryCtxRelease_v2(0));
        P("prim_release2", cuDevicePrimaryCtxRelease_v2(0));
        P("prim_release3", cuDevicePrimaryCtxRelease_v2(0));
        P("prim_reset", cuDevicePrimaryCtxReset_v2(0));
        P("reg_after_reset", cuMemHostRegister_v2(p, 4096, 0));
    }
    return 0;
}
