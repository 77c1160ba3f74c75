/*
 * module.c - modules, functions and kernel launches.
 *
 * simcuda runs no GPU code. A module is kept as the image it was given:
 * from PTX it learns each .entry's name and the sizes of its parameters;
 * a cubin (ELF) is searched for the name; a fatbin accepts any name. A
 * launch is a device operation on its stream like any other (in stream
 * order, delayed by SIMHIP_OP_DELAY_US, a node during capture) that
 * touches no host memory: an opaque kernel.
 *
 * Kernel implementations: SIMCUDA_KERNELS names shared libraries (":"
 * separated); one that defines simcuda_kernel_<entry> (simcuda.h) gives
 * the entry a body in C, which runs at execution with copies of the launch's
 * arguments (taken at launch, as the driver takes them) and reaches memory
 * through simcudaDeviceRead/Write, checked like every device access.
 * So a program written for a real GPU runs unchanged and its kernel's
 * accesses to host memory are checked.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sc_internal.h"
#include "simcuda.h"

#define SC_MOD_MAGIC 0x5c0d0d1u
#define SC_FUNC_MAGIC 0x5cf0f0f1u
#define SC_MAX_PARAMS 64

enum image_kind { IMG_PTX, IMG_CUBIN, IMG_FATBIN };

struct sc_module {
    unsigned magic;
    enum image_kind kind;
    char *text;        /* PTX, NUL-terminated copy */
    unsigned char *bin; /* cubin copy */
    size_t bin_size;
};

struct sc_func {
    unsigned magic;
    struct sc_module *mod;
    int nparams;                  /* -1: unknown (not PTX) */
    size_t psize[SC_MAX_PARAMS], poff[SC_MAX_PARAMS], argbytes;
    simcudaKernelImpl impl;
    char name[];
};

static bool mod_alive(const struct sc_module *m)
{
    return m && __atomic_load_n(&m->magic, __ATOMIC_ACQUIRE) == SC_MOD_MAGIC;
}

static bool func_alive(const struct sc_func *f)
{
    return f && __atomic_load_n(&f->magic, __ATOMIC_ACQUIRE) == SC_FUNC_MAGIC &&
           mod_alive(f->mod);
}

/* ---- images ------------------------------------------------------------ */

static bool looks_like_ptx(const char *s)
{
    return strstr(s, ".version") && strstr(s, ".target");
}

static CUresult load_image(CUmodule *out, const void *image)
{
    CUresult e = sc_enter(true);
    if (e != CUDA_SUCCESS)
        return e;
    if (!out || !image)
        return CUDA_ERROR_INVALID_VALUE;
    const unsigned char *b = image;
    struct sc_module *m = calloc(1, sizeof *m);
    if (!m)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (memcmp(b, "\x7f" "ELF", 4) == 0 && b[4] == 2) {
        /* 64-bit ELF: its size is the end of the section header table. */
        uint64_t shoff;
        uint16_t shentsize, shnum;
        memcpy(&shoff, b + 0x28, 8);
        memcpy(&shentsize, b + 0x3a, 2);
        memcpy(&shnum, b + 0x3c, 2);
        m->kind = IMG_CUBIN;
        m->bin_size = shoff + (size_t)shentsize * shnum;
        m->bin = malloc(m->bin_size ? m->bin_size : 1);
        if (!m->bin)
            goto oom;
        memcpy(m->bin, b, m->bin_size);
    } else if (b[0] == 0x50 && b[1] == 0xed && b[2] == 0x55 && b[3] == 0xba) {
        m->kind = IMG_FATBIN;
    } else if (strnlen((const char *)b, 64 << 20) < (64 << 20) && looks_like_ptx((const char *)b)) {
        m->kind = IMG_PTX;
        m->text = strdup((const char *)b);
        if (!m->text)
            goto oom;
    } else {
        free(m);
        return CUDA_ERROR_INVALID_IMAGE;
    }
    m->magic = SC_MOD_MAGIC;
    *out = (CUmodule)m;
    return CUDA_SUCCESS;
oom:
    free(m);
    return CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
    return load_image(module, image);
}

/* JIT options change nothing here. */
CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
                            CUjit_option *options, void **optionValues)
{
    if (numOptions && (!options || !optionValues))
        return CUDA_ERROR_INVALID_VALUE;
    return load_image(module, image);
}

CUresult cuModuleLoadFatBinary(CUmodule *module, const void *fatCubin)
{
    return load_image(module, fatCubin);
}

CUresult cuModuleLoad(CUmodule *module, const char *fname)
{
    CUresult e = sc_enter(true);
    if (e != CUDA_SUCCESS)
        return e;
    if (!module || !fname)
        return CUDA_ERROR_INVALID_VALUE;
    FILE *f = fopen(fname, "rb");
    if (!f)
        return CUDA_ERROR_FILE_NOT_FOUND;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 65536;
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                return CUDA_ERROR_OUT_OF_MEMORY;
            }
            buf = nb;
        }
        size_t r = fread(buf + n, 1, 4096, f);
        n += r;
        if (r < 4096)
            break;
    }
    fclose(f);
    buf[n] = 0;
    e = n ? load_image(module, buf) : CUDA_ERROR_INVALID_IMAGE;
    free(buf);
    return e;
}

/* Its functions' handles die with it. */
CUresult cuModuleUnload(CUmodule hmod)
{
    CUresult e = sc_enter(true);
    if (e != CUDA_SUCCESS)
        return e;
    struct sc_module *m = (struct sc_module *)hmod;
    if (!mod_alive(m))
        return CUDA_ERROR_INVALID_HANDLE;
    __atomic_store_n(&m->magic, 0, __ATOMIC_RELEASE);
    free(m->text);
    m->text = NULL;
    free(m->bin);
    m->bin = NULL;
    return CUDA_SUCCESS; /* the struct stays: stale handles read a dead magic */
}

/* ---- PTX entries ---------------------------------------------------------- */

static size_t type_size(const char *t)
{
    if (!strncmp(t, ".u64", 4) || !strncmp(t, ".s64", 4) || !strncmp(t, ".b64", 4) ||
        !strncmp(t, ".f64", 4))
        return 8;
    if (!strncmp(t, ".u32", 4) || !strncmp(t, ".s32", 4) || !strncmp(t, ".b32", 4) ||
        !strncmp(t, ".f32", 4))
        return 4;
    if (!strncmp(t, ".u16", 4) || !strncmp(t, ".s16", 4) || !strncmp(t, ".b16", 4) ||
        !strncmp(t, ".f16", 4))
        return 2;
    if (!strncmp(t, ".u8", 3) || !strncmp(t, ".s8", 3) || !strncmp(t, ".b8", 3))
        return 1;
    return 0;
}

/* Find ".entry name" in PTX and read its parameter list into f. */
static bool ptx_entry(const char *text, const char *name, struct sc_func *f)
{
    size_t nl = strlen(name);
    for (const char *p = strstr(text, ".entry"); p; p = strstr(p + 6, ".entry")) {
        const char *q = p + 6;
        while (*q == ' ' || *q == '\t')
            q++;
        if (strncmp(q, name, nl) != 0)
            continue;
        q += nl;
        if (*q != '(' && *q != ' ' && *q != '\t' && *q != '\n' && *q != '\r' && *q != '{')
            continue;
        f->nparams = 0;
        f->argbytes = 0;
        while (*q == ' ' || *q == '\t' || *q == '\r' || *q == '\n')
            q++;
        if (*q != '(')
            return true;
        const char *end = strchr(q, ')');
        if (!end)
            return false;
        for (const char *r = strstr(q, ".param"); r && r < end; r = strstr(r + 6, ".param")) {
            if (f->nparams == SC_MAX_PARAMS)
                return false;
            const char *t = r + 6;
            while (*t == ' ' || *t == '\t')
                t++;
            size_t align = 0, sz;
            if (!strncmp(t, ".align", 6)) {
                align = strtoul(t + 6, (char **)&t, 10);
                while (*t == ' ' || *t == '\t')
                    t++;
            }
            sz = type_size(t);
            const char *br = memchr(t, '[', (size_t)(end - t));
            const char *comma = memchr(t, ',', (size_t)(end - t));
            if (br && (!comma || br < comma))
                sz *= strtoul(br + 1, NULL, 10);
            if (!sz)
                return false;
            if (!align)
                align = sz < 8 ? sz : 8;
            size_t off = (f->argbytes + align - 1) / align * align;
            f->psize[f->nparams] = sz;
            f->poff[f->nparams] = off;
            f->argbytes = off + sz;
            f->nparams++;
        }
        return true;
    }
    return false;
}

static bool cubin_has(const struct sc_module *m, const char *name)
{
    size_t nl = strlen(name);
    for (size_t i = 0; i + nl + 1 < m->bin_size; i++)
        if (m->bin[i] == 0 && !memcmp(m->bin + i + 1, name, nl) && m->bin[i + 1 + nl] == 0)
            return true;
    return false;
}

/* ---- kernel bodies from SIMCUDA_KERNELS ---------------------------------- */

static simcudaKernelImpl find_impl(const char *name)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static void *libs[8];
    static int nlibs = -1;
    pthread_mutex_lock(&lock);
    if (nlibs < 0) {
        nlibs = 0;
        const char *env = getenv("SIMCUDA_KERNELS");
        char path[4096];
        while (env && *env && nlibs < 8) {
            size_t n = strcspn(env, ":");
            if (n && n < sizeof path) {
                memcpy(path, env, n);
                path[n] = 0;
                void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
                if (h)
                    libs[nlibs++] = h;
                else
                    fprintf(stderr, "simcuda: SIMCUDA_KERNELS: %s\n", dlerror());
            }
            env += n + (env[n] == ':');
        }
    }
    pthread_mutex_unlock(&lock);
    char sym[256];
    if (snprintf(sym, sizeof sym, "simcuda_kernel_%s", name) >= (int)sizeof sym)
        return NULL;
    for (int i = 0; i < nlibs; i++) {
        void *f = dlsym(libs[i], sym);
        if (f)
            return (simcudaKernelImpl)f;
    }
    return NULL;
}

/* Not found: CUDA_ERROR_NOT_FOUND (500). */
CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
    CUresult e = sc_enter(true);
    if (e != CUDA_SUCCESS)
        return e;
    struct sc_module *m = (struct sc_module *)hmod;
    if (!hfunc || !name)
        return CUDA_ERROR_INVALID_VALUE;
    if (!mod_alive(m))
        return CUDA_ERROR_INVALID_HANDLE;
    struct sc_func *f = calloc(1, sizeof *f + strlen(name) + 1);
    if (!f)
        return CUDA_ERROR_OUT_OF_MEMORY;
    strcpy(f->name, name);
    f->mod = m;
    f->nparams = -1;
    bool found = m->kind == IMG_FATBIN || (m->kind == IMG_CUBIN && cubin_has(m, name)) ||
                 (m->kind == IMG_PTX && ptx_entry(m->text, name, f));
    if (!found) {
        free(f);
        return CUDA_ERROR_NOT_FOUND;
    }
    f->impl = find_impl(name);
    f->magic = SC_FUNC_MAGIC;
    *hfunc = (CUfunction)f;
    return CUDA_SUCCESS;
}

CUresult cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc)
{
    CUresult e = sc_enter(true);
    if (e != CUDA_SUCCESS)
        return e;
    if (!pi)
        return CUDA_ERROR_INVALID_VALUE;
    if (!func_alive((struct sc_func *)hfunc))
        return CUDA_ERROR_INVALID_HANDLE;
    switch (attrib) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = 1024; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *pi = 32; break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION:
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *pi = 90; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *pi = 48 << 10; break;
    default:
        if (attrib < 0 || attrib > 20)
            return CUDA_ERROR_INVALID_VALUE;
        *pi = 0;
    }
    return CUDA_SUCCESS;
}

/* Accepted and forgotten: nothing in the model depends on them. */
CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value)
{
    (void)value;
    CUresult e = sc_enter(true);
    if (e != CUDA_SUCCESS)
        return e;
    if (!func_alive((struct sc_func *)hfunc))
        return CUDA_ERROR_INVALID_HANDLE;
    return attrib < 0 || attrib > 20 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

CUresult cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config)
{
    CUresult e = sc_enter(true);
    if (e != CUDA_SUCCESS)
        return e;
    if (!func_alive((struct sc_func *)hfunc))
        return CUDA_ERROR_INVALID_HANDLE;
    return config < 0 || config > 3 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

/* ---- launches ---------------------------------------------------------------- */

struct launch {
    simcudaKernelImpl impl;
    bool once;            /* freed after it runs (false: a graph node) */
    simcudaLaunch l;
    void *ptrs[SC_MAX_PARAMS];
    unsigned char args[];
};

static void opaque_kernel(void *arg)
{
    (void)arg;
}

static void run_launch(void *arg)
{
    struct launch *x = arg;
    x->impl(&x->l);
    if (x->once)
        free(x);
}

/* The argument bytes of a launch: from kernelParams (one pointer per PTX
 * parameter) or from extra's CU_LAUNCH_PARAM_BUFFER_POINTER. */
static CUresult copy_args(struct launch *x, const struct sc_func *f, void **params, void **extra)
{
    if (extra) {
        void *buf = NULL;
        size_t size = 0;
        for (size_t i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
            if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
                buf = extra[i + 1];
            else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
                size = *(size_t *)extra[i + 1];
            else
                return CUDA_ERROR_INVALID_VALUE;
        }
        if (!buf || size < f->argbytes)
            return CUDA_ERROR_INVALID_VALUE;
        memcpy(x->args, buf, f->argbytes);
    } else {
        for (int i = 0; i < f->nparams; i++)
            memcpy(x->args + f->poff[i], params[i], f->psize[i]);
    }
    for (int i = 0; i < f->nparams; i++)
        x->ptrs[i] = x->args + f->poff[i];
    x->l.params = x->ptrs;
    return CUDA_SUCCESS;
}

static CUresult launch(CUfunction hf, const unsigned grid[3], const unsigned block[3],
                       unsigned shared, CUstream h, void **params, void **extra, bool ptsz)
{
    (void)shared;
    struct sc_func *f = (struct sc_func *)hf;
    hipStream_t hs = sc_stream(h, ptsz);
    CUresult e = sc_enter(true);
    if (e != CUDA_SUCCESS)
        return e;
    if (!func_alive(f))
        return CUDA_ERROR_INVALID_HANDLE;
    if (!grid[0] || !grid[1] || !grid[2] || !block[0] || !block[1] || !block[2] ||
        grid[1] > 65535 || grid[2] > 65535 || grid[0] > 0x7fffffffu || block[2] > 64 ||
        (unsigned long long)block[0] * block[1] * block[2] > 1024 || (params && extra) ||
        (f->nparams > 0 && !params && !extra))
        return CUDA_ERROR_INVALID_VALUE;
    if ((e = sc_implicit_check(hs)) != CUDA_SUCCESS)
        return e;
    sc_drv_gate();
    struct sh_work w = { .kind = W_KERNEL, .kfn = opaque_kernel, .handle = (hipStream_t)h };
    struct launch *x = NULL;
    if (f->impl && f->nparams >= 0) {
        x = calloc(1, sizeof *x + f->argbytes);
        if (!x)
            return CUDA_ERROR_OUT_OF_MEMORY;
        x->impl = f->impl;
        x->once = true;
        memcpy(x->l.grid, grid, sizeof x->l.grid);
        memcpy(x->l.block, block, sizeof x->l.block);
        if ((e = copy_args(x, f, params, extra)) != CUDA_SUCCESS) {
            free(x);
            return e;
        }
        w.kfn = run_launch;
        w.arg = x;
    }
    uint64_t seq = 1;
    e = sc_res(sh_enqueue_handle(hs, &w, &seq, NULL));
    if (x && e != CUDA_SUCCESS)
        free(x);
    else if (x && seq == 0)
        x->once = false; /* captured: a node a graph may run many times */
    return e;
}

CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                        unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared,
                        CUstream hStream, void **kernelParams, void **extra)
{
    unsigned g[3] = { gx, gy, gz }, b[3] = { bx, by, bz };
    return launch(f, g, b, shared, hStream, kernelParams, extra, false);
}

CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                             unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared,
                             CUstream hStream, void **kernelParams, void **extra)
{
    unsigned g[3] = { gx, gy, gz }, b[3] = { bx, by, bz };
    return launch(f, g, b, shared, hStream, kernelParams, extra, true);
}

/* Launch attributes change nothing in the model. */
static CUresult launch_ex(const CUlaunchConfig *c, CUfunction f, void **params, void **extra,
                          bool ptsz)
{
    if (!c || (c->numAttrs && !c->attrs))
        return CUDA_ERROR_INVALID_VALUE;
    unsigned g[3] = { c->gridDimX, c->gridDimY, c->gridDimZ };
    unsigned b[3] = { c->blockDimX, c->blockDimY, c->blockDimZ };
    return launch(f, g, b, c->sharedMemBytes, c->hStream, params, extra, ptsz);
}

CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
                          void **extra)
{
    return launch_ex(config, f, kernelParams, extra, false);
}

CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
                               void **extra)
{
    return launch_ex(config, f, kernelParams, extra, true);
}

CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                   unsigned int bx, unsigned int by, unsigned int bz,
                                   unsigned int shared, CUstream hStream, void **kernelParams)
{
    unsigned g[3] = { gx, gy, gz }, b[3] = { bx, by, bz };
    return launch(f, g, b, shared, hStream, kernelParams, NULL, false);
}

CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy,
                                        unsigned int gz, unsigned int bx, unsigned int by,
                                        unsigned int bz, unsigned int shared, CUstream hStream,
                                        void **kernelParams)
{
    unsigned g[3] = { gx, gy, gz }, b[3] = { bx, by, bz };
    return launch(f, g, b, shared, hStream, kernelParams, NULL, true);
}
