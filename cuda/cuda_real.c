/*
 * cuda_real.c - resolving the real CUDA driver functions (see cuda_real.h).
 */
#include "cuda_real.h"
#include "cuda_hooks.h"
#include "diag.h"
#include "interpose.h"
#include "options.h"
#include "runtime.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

sp_cu_table sp_cu;

typedef void *(*dlsym_fn)(void *, const char *);
dlsym_fn sp_real_dlsym(void);
void *sp_next_symbol(const char *name);

static const struct {
    const char *name;
    size_t offset;
} table[] = {
#define SP_CU(kind, ret, name, params) {#name, offsetof(sp_cu_table, name)},
#include "cuda_real.inc"
#undef SP_CU
};
#define NTABLE (sizeof(table) / sizeof(table[0]))

static int active;

/* 1 if fn lies in safepin itself (a look-up that found our own shim). */
static int is_ours(void *fn)
{
    Dl_info a, b;
    return fn && dladdr(fn, &a) && dladdr((void *)&sp_cu_resolve, &b) && a.dli_fbase == b.dli_fbase;
}

static void set_slot(size_t i, void *fn)
{
    void **slot = (void **)((char *)&sp_cu + table[i].offset);
    if (fn && !is_ours(fn) && !__atomic_load_n(slot, __ATOMIC_ACQUIRE))
        __atomic_store_n(slot, fn, __ATOMIC_RELEASE);
}

void sp_cu_resolve(int force)
{
    static int done;
    if (__atomic_load_n(&done, __ATOMIC_ACQUIRE) && !force)
        return;
    for (size_t i = 0; i < NTABLE; i++)
        set_slot(i, sp_next_symbol(table[i].name));
    __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
}

void sp_cu_complete_from(void *handle)
{
    dlsym_fn real = sp_real_dlsym();
    if (!real || !handle)
        return;
    for (size_t i = 0; i < NTABLE; i++) {
        void **slot = (void **)((char *)&sp_cu + table[i].offset);
        if (!__atomic_load_n(slot, __ATOMIC_ACQUIRE))
            set_slot(i, real(handle, table[i].name));
    }
}

int sp_cu_offer(const char *name, void *fn)
{
    for (size_t i = 0; i < NTABLE; i++)
        if (strcmp(table[i].name, name) == 0) {
            set_slot(i, fn);
            return 1;
        }
    return 0;
}

void sp_cu_enter(void)
{
    sp_init();
    if (__atomic_load_n(&active, __ATOMIC_ACQUIRE))
        return;
    sp_cu_resolve(0);
    if (sp_cu.cuEventCreate && sp_cu.cuMemHostUnregister) {
        __atomic_store_n(&active, 1, __ATOMIC_RELEASE);
        sp_diag_runtime_used(SP_RT_CUDA);
    }
}

int sp_cu_active(void) { return __atomic_load_n(&active, __ATOMIC_ACQUIRE); }

sp_CUcontext sp_cu_current_ctx(void)
{
    sp_CUcontext c = NULL;
    if (!sp_cu.cuCtxGetCurrent || sp_cu.cuCtxGetCurrent(&c) != SP_CUDA_SUCCESS)
        return NULL;
    return c;
}

__thread void *sp_cu_caller;
__thread int sp_cu_via_runtime;

/* " (call)" into buf, without printf's stack (the hook's thread may be
 * small: G12). */
static const char *entry_name(char *buf, size_t n, const char *call)
{
    size_t l = strlen(call);
    if (l > n - 4)
        l = n - 4;
    buf[0] = ' ';
    buf[1] = '(';
    memcpy(buf + 2, call, l);
    buf[2 + l] = ')';
    buf[3 + l] = '\0';
    return buf;
}

const char *sp_cu_entry(const char *runtime_call)
{
    static __thread char buf[64];
    Dl_info di;
    if (!runtime_call)
        return "";
    if (sp_cu_via_runtime)
        return entry_name(buf, sizeof(buf), runtime_call);
    if (!sp_cu_caller || !dladdr(sp_cu_caller, &di) || !di.dli_fname ||
        !strstr(di.dli_fname, "libcudart"))
        return "";
    return entry_name(buf, sizeof(buf), runtime_call);
}
