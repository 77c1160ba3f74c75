/*
 * badinput - one bad argument to one public entry point per run:
 *   badinput list      the case names, one a line
 *   badinput NAME      runs that case, prints "call <entry point>", then
 *                      "rc <value> errno <value>"
 *                      (and "intact <0|1>" where a registration sits next
 *                      to the bad call), then "done"
 *
 * Every entry point safepin exports (the HIP hooks, the memory hooks,
 * dlsym, dlclose) with NULL, SIZE_MAX, sizes that wrap, unaligned and
 * kernel addresses, destroyed streams and another device's streams. Left
 * out: calls that crash or abort inside glibc or the runtime itself, bare
 * as much as under safepin (dlclose(NULL), a device copy of SIZE_MAX bytes,
 * free of a pointer malloc never returned).
 * tests/badinput/run.sh runs each case without and with safepin, in both
 * personalities, and checks the answers (issue 12, item 6).
 *
 * A registration (REG, 4 pages) is live in every case, so that the memory
 * hooks take their slow path; "intact" says it still unregisters once after
 * the bad call (a refused call changes nothing, G2).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <unistd.h>
#include <hip/hip_runtime_api.h>

#define PG 4096
#define KERNEL_ADDR ((void *)0xffff888000000000ull)

static char *reg;       /* REG: 4 registered pages inside an 8-page mapping */
static hipStream_t dead;  /* a destroyed stream */
static void nop_fn(void *u) { (void)u; }
static void nop_cb(hipStream_t s, hipError_t e, void *u) { (void)s; (void)e; (void)u; }

static void setup(void)
{
    char *m = mmap(NULL, 8 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        exit(2);
    reg = m + 2 * PG;
    memset(m, 1, 8 * PG);
    if (hipHostRegister(reg, 4 * PG, hipHostRegisterMapped) != hipSuccess)
        exit(2);
    if (hipStreamCreateWithFlags(&dead, hipStreamNonBlocking) != hipSuccess ||
        hipStreamDestroy(dead) != hipSuccess)
        exit(2);
}

static int intact(void) { return hipHostUnregister(reg) == hipSuccess; }

/* The cases: name, the public entry point it calls, then the call (its
 * value is the result printed). */
#define CASES(X)                                                                                   \
    X(register_null, hipHostRegister, hipHostRegister(NULL, PG, 0))                                \
    X(register_size0, hipHostRegister, hipHostRegister(reg + 5 * PG, 0, 0))                        \
    X(register_size_max, hipHostRegister, hipHostRegister(reg + 5 * PG, SIZE_MAX, 0))              \
    X(register_wraps, hipHostRegister, hipHostRegister(reg + 5 * PG, UINTPTR_MAX - (uintptr_t)reg, 0)) \
    X(register_kernel_addr, hipHostRegister, hipHostRegister(KERNEL_ADDR, PG, 0))                  \
    X(register_bad_flags, hipHostRegister, hipHostRegister(reg - 2 * PG, PG, 0x80000000u))         \
    X(register_unaligned, hipHostRegister, hipHostRegister(reg - 2 * PG + 1, 100, 0))              \
    X(register_overlapping, hipHostRegister, hipHostRegister(reg + PG, PG, 0))                     \
    X(register_unmapped, hipHostRegister, hipHostRegister(unmapped(), PG, 0))                      \
    X(unregister_null, hipHostUnregister, hipHostUnregister(NULL))                                 \
    X(unregister_unknown, hipHostUnregister, hipHostUnregister(reg - 2 * PG))                      \
    X(unregister_unaligned, hipHostUnregister, hipHostUnregister(reg + 1))                         \
    X(unregister_interior, hipHostUnregister, hipHostUnregister(reg + PG))                         \
    X(unregister_kernel_addr, hipHostUnregister, hipHostUnregister(KERNEL_ADDR))                   \
    X(unregister_twice, hipHostUnregister, (hipHostUnregister(reg), hipHostUnregister(reg)))       \
    X(hipfree_null, hipFree, hipFree(NULL))                                                        \
    X(hipfree_host_pointer, hipFree, hipFree(reg + 8))                                             \
    X(hipfree_kernel_addr, hipFree, hipFree(KERNEL_ADDR))                                          \
    X(hipfree_unaligned_device, hipFree, hipfree_unaligned())                                      \
    X(attributes_null_attr, hipPointerGetAttributes, hipPointerGetAttributes(NULL, reg))           \
    X(attributes_null_ptr, hipPointerGetAttributes, attr_of(NULL))                                 \
    X(attributes_kernel_addr, hipPointerGetAttributes, attr_of(KERNEL_ADDR))                       \
    X(attributes_unaligned_interior, hipPointerGetAttributes, attr_of(reg + 4097))                 \
    X(devptr_null_out, hipHostGetDevicePointer, hipHostGetDevicePointer(NULL, reg, 0))             \
    X(devptr_null_ptr, hipHostGetDevicePointer, devptr_of(NULL, 0))                                \
    X(devptr_bad_flags, hipHostGetDevicePointer, devptr_of(reg, 7))                                \
    X(devptr_kernel_addr, hipHostGetDevicePointer, devptr_of(KERNEL_ADDR, 0))                      \
    X(flags_null_out, hipHostGetFlags, hipHostGetFlags(NULL, reg))                                 \
    X(flags_null_ptr, hipHostGetFlags, flags_of(NULL))                                             \
    X(flags_kernel_addr, hipHostGetFlags, flags_of(KERNEL_ADDR))                                   \
    X(stream_create_null, hipStreamCreate, hipStreamCreate(NULL))                                  \
    X(stream_create_flags_null, hipStreamCreateWithFlags, hipStreamCreateWithFlags(NULL, 0))       \
    X(stream_create_bad_flags, hipStreamCreateWithFlags, stream_with_flags(0x7fffffff))            \
    X(stream_create_priority_null, hipStreamCreateWithPriority, hipStreamCreateWithPriority(NULL, 0, 0)) \
    X(stream_destroy_null, hipStreamDestroy, hipStreamDestroy(NULL))                               \
    X(stream_destroy_destroyed, hipStreamDestroy, hipStreamDestroy(dead))                          \
    X(capture_begin_destroyed, hipStreamBeginCapture, hipStreamBeginCapture(dead, hipStreamCaptureModeGlobal)) \
    X(capture_begin_null_stream, hipStreamBeginCapture, hipStreamBeginCapture(NULL, hipStreamCaptureModeGlobal)) \
    X(capture_begin_bad_mode, hipStreamBeginCapture, capture_bad_mode())                           \
    X(capture_end_destroyed, hipStreamEndCapture, end_capture(dead))                               \
    X(capture_end_null_graph, hipStreamEndCapture, capture_end_null())                             \
    X(capture_end_not_capturing, hipStreamEndCapture, end_capture(live_stream()))                  \
    X(callback_null_fn, hipStreamAddCallback, hipStreamAddCallback(live_stream(), NULL, NULL, 0))  \
    X(callback_destroyed, hipStreamAddCallback, hipStreamAddCallback(dead, nop_cb, NULL, 0))       \
    X(callback_bad_flags, hipStreamAddCallback, hipStreamAddCallback(live_stream(), nop_cb, NULL, 5)) \
    X(hostfunc_null_fn, hipLaunchHostFunc, launch_host_func(live_stream(), NULL, NULL))            \
    X(hostfunc_destroyed, hipLaunchHostFunc, launch_host_func(dead, nop_fn, NULL))                 \
    X(hostfunc_other_device, hipLaunchHostFunc, hostfunc_other_device())                           \
    X(procaddr_null_symbol, hipGetProcAddress, procaddr("", 1))                                    \
    X(procaddr_null_out, hipGetProcAddress, get_proc("hipHostRegister", NULL, NULL))               \
    X(procaddr_unknown, hipGetProcAddress, procaddr("hipNoSuchFunction", 0))                       \
    X(memcpy_null_dst, hipMemcpyAsync, hipMemcpyAsync(NULL, reg, 16, hipMemcpyHostToHost, NULL))   \
    X(memcpy_bad_kind, hipMemcpyAsync, hipMemcpyAsync(reg, reg + PG, 16, (hipMemcpyKind)77, NULL)) \
    X(memcpy_destroyed_stream, hipMemcpyAsync, hipMemcpyAsync(reg, reg + PG, 16, hipMemcpyHostToHost, dead)) \
    X(memcpy_other_device_stream, hipMemcpyAsync, memcpy_other_device())                           \
    X(realloc_size_max, realloc, realloc_huge())                                                   \
    X(munmap_len0, munmap, munmap(reg, 0))                                                         \
    X(munmap_unaligned, munmap, munmap(reg + 1, PG))                                               \
    X(munmap_size_max, munmap, munmap(reg, SIZE_MAX))                                              \
    X(munmap_wraps, munmap, munmap(reg, UINTPTR_MAX - (uintptr_t)reg + 1 + PG))                    \
    X(munmap_kernel_addr, munmap, munmap(KERNEL_ADDR, PG))                                         \
    X(mremap_bad_flags, mremap, ptr_rc(mremap(reg, PG, PG, 0x40)))                                 \
    X(mremap_size_max, mremap, ptr_rc(mremap(reg, PG, SIZE_MAX, MREMAP_MAYMOVE)))                  \
    X(mremap_old_size_past_mapping, mremap, ptr_rc(mremap(reg, 64 * PG, 64 * PG, MREMAP_MAYMOVE))) \
    X(mremap_unaligned, mremap, ptr_rc(mremap(reg + 1, PG, 2 * PG, MREMAP_MAYMOVE)))               \
    X(mremap_fixed_overlapping, mremap, ptr_rc(mremap(reg, 2 * PG, 2 * PG, MREMAP_MAYMOVE | MREMAP_FIXED, reg + PG))) \
    X(madvise_size_max, madvise, madvise(reg, SIZE_MAX, MADV_DONTNEED))                            \
    X(madvise_unaligned, madvise, madvise(reg + 1, PG, MADV_DONTNEED))                             \
    X(madvise_bad_advice, madvise, madvise(reg, PG, 9999))                                         \
    X(madvise_kernel_addr, madvise, madvise(KERNEL_ADDR, PG, MADV_DONTNEED))                       \
    X(mmap_fixed_unaligned, mmap, ptr_rc(mmap(reg + 1, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0))) \
    X(mmap_fixed_size_max, mmap, ptr_rc(mmap(reg, SIZE_MAX, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0))) \
    X(mmap_fixed_kernel_addr, mmap, ptr_rc(mmap(KERNEL_ADDR, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0))) \
    X(mmap_fixed_bad_fd, mmap, ptr_rc(mmap(reg, PG, PROT_READ, MAP_SHARED | MAP_FIXED, 999, 0)))   \
    X(shmdt_null, shmdt, shmdt(null_ptr))                                                          \
    X(shmdt_unaligned, shmdt, shmdt(reg + 1))                                                      \
    X(shmdt_not_shm, shmdt, shmdt(reg))                                                            \
    X(shmdt_kernel_addr, shmdt, shmdt(KERNEL_ADDR))                                                \
    X(dlsym_unknown_name, dlsym, dlsym_rc(RTLD_DEFAULT, "safepin_no_such_symbol"))                 \
    X(dlsym_self_hooked_name, dlsym, dlsym_rc(dl_self(), "hipHostRegister"))                       \
    X(dlclose_bad_handle, dlclose, dlclose_bad())

/* ROCm 6.2+ only (not in the 5.2 headers): looked up, as programs built
 * for both do. */
typedef hipError_t (*proc_fn)(const char *, void **, int, uint64_t, int *);
static long get_proc(const char *name, void **f, int *st)
{
    proc_fn gp = (proc_fn)dlsym(RTLD_DEFAULT, "hipGetProcAddress");
    return gp ? (long)gp(name, f, 600, 0, st) : -100;
}
/* ROCm 5.3+ (Debian's 5.2 lacks it): looked up as well. */
typedef hipError_t (*hostfn_launch)(hipStream_t, void (*)(void *), void *);
static long launch_host_func(hipStream_t s, void (*fn)(void *), void *u)
{
    hostfn_launch l = (hostfn_launch)dlsym(RTLD_DEFAULT, "hipLaunchHostFunc");
    return l ? (long)l(s, fn, u) : -100;
}
static void *volatile null_ptr;
static volatile size_t huge_size = SIZE_MAX - 4096;

static void *unmapped(void)
{
    void *p = mmap(NULL, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap(p, PG);
    return p;
}
static long hipfree_unaligned(void)
{
    char *d = NULL;
    if (hipMalloc((void **)&d, 4 * PG) != hipSuccess)
        return -100;
    long rc = hipFree(d + 1);
    hipFree(d);
    return rc;
}
static long attr_of(const void *p)
{
    hipPointerAttribute_t a;
    return hipPointerGetAttributes(&a, p);
}
static long devptr_of(void *p, unsigned f)
{
    void *d;
    return hipHostGetDevicePointer(&d, p, f);
}
static long flags_of(void *p)
{
    unsigned f;
    return hipHostGetFlags(&f, p);
}
static long stream_with_flags(unsigned f)
{
    hipStream_t s = NULL;
    long rc = hipStreamCreateWithFlags(&s, f);
    if (rc == hipSuccess)
        hipStreamDestroy(s);
    return rc;
}
static hipStream_t live_stream(void)
{
    static hipStream_t s;
    if (!s && hipStreamCreateWithFlags(&s, hipStreamNonBlocking) != hipSuccess)
        exit(2);
    return s;
}
static long capture_bad_mode(void)
{
    long rc = hipStreamBeginCapture(live_stream(), (hipStreamCaptureMode)99);
    if (rc == hipSuccess) {
        hipGraph_t g;
        hipStreamEndCapture(live_stream(), &g);
    }
    return rc;
}
static long end_capture(hipStream_t s)
{
    hipGraph_t g = NULL;
    return hipStreamEndCapture(s, &g);
}
static long capture_end_null(void)
{
    hipStream_t s = live_stream();
    if (hipStreamBeginCapture(s, hipStreamCaptureModeThreadLocal) != hipSuccess)
        return -100;
    long rc = hipStreamEndCapture(s, NULL);
    hipGraph_t g;
    hipStreamEndCapture(s, &g); /* ends it, if the first did not */
    return rc;
}
static hipStream_t other_device_stream(void)
{
    int n = 0;
    hipStream_t s = NULL;
    if (hipGetDeviceCount(&n) != hipSuccess || n < 2 || hipSetDevice(1) != hipSuccess)
        return NULL;
    if (hipStreamCreateWithFlags(&s, hipStreamNonBlocking) != hipSuccess)
        s = NULL;
    hipSetDevice(0);
    return s;
}
static long hostfunc_other_device(void)
{
    hipStream_t s = other_device_stream();
    if (!s)
        return -100;
    long rc = launch_host_func(s, nop_fn, NULL);
    hipStreamSynchronize(s);
    hipStreamDestroy(s);
    return rc;
}
static long memcpy_other_device(void)
{
    hipStream_t s = other_device_stream();
    if (!s)
        return -100;
    long rc = hipMemcpyAsync(reg, reg + PG, 16, hipMemcpyHostToHost, s);
    hipStreamSynchronize(s);
    hipStreamDestroy(s);
    return rc;
}
static long procaddr(const char *name, int null_status)
{
    void *f = NULL;
    int st = 0;
    return get_proc(name, &f, null_status ? NULL : &st);
}
static long realloc_huge(void)
{
    char *p = malloc(100);
    if (!p)
        return -100;
    char *q = realloc(p, huge_size);
    long rc = q ? 0 : -1;
    free(q ? q : p);
    return rc;
}
/* A handle closed once too often (the loader answers; a NULL handle
 * crashes glibc itself, with or without safepin, so it is not a case). */
static long dlclose_bad(void)
{
    void *h = dlopen("libm.so.6", RTLD_NOW);
    if (!h)
        return -100;
    dlclose(h);
    return dlclose(h) != 0; /* libm stays loaded (the runtime needs it) */
}
static long ptr_rc(void *p) { return p == MAP_FAILED ? -1 : 0; }
static void *dl_self(void) { return dlopen(NULL, RTLD_NOW); }
static long dlsym_rc(void *h, const char *name) { return dlsym(h, name) != NULL; }

#define NAME(n, entry, call) #n,
static const char *const names[] = {CASES(NAME)};
#define ENTRY(n, entry, call) #entry,
static const char *const entries[] = {CASES(ENTRY)};

static long run(int i)
{
#define RUN(n, entry, call) if (i == k++) return (long)(call);
    int k = 0;
    CASES(RUN)
#undef RUN
    return -100;
}

int main(int argc, char **argv)
{
    int n = (int)(sizeof(names) / sizeof(names[0]));
    if (argc == 2 && !strcmp(argv[1], "list")) {
        for (int i = 0; i < n; i++)
            printf("%s\n", names[i]);
        return 0;
    }
    for (int i = 0; argc == 2 && i < n; i++) {
        if (strcmp(argv[1], names[i]) != 0)
            continue;
        printf("call %s\n", entries[i]);
        setup();
        errno = 0;
        long rc = run(i);
        int e = errno;
        printf("rc %ld errno %d\n", rc, rc == 0 ? 0 : e);
        fflush(stdout);
        if (strncmp(names[i], "unregister_twice", 16) != 0)
            printf("intact %d\n", intact());
        printf("done\n");
        return 0;
    }
    fprintf(stderr, "usage: badinput list | badinput CASE\n");
    return 2;
}
