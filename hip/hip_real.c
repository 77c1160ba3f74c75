/*
 * hip_real.c - resolving the real HIP runtime functions (see hip_real.h).
 */
#include "hip_real.h"
#include "backend.h"
#include "diag.h"

#include <dlfcn.h>
#include <string.h>

sp_hip_table sp_hip;

enum { NEED_REQ, NEED_OPT };

static const struct {
    const char *name;
    int need;
    size_t offset;
} table[] = {
#define SP_HIP(kind, need, ret, name, params, args, logic) {#name, NEED_##need, offsetof(sp_hip_table, name)},
#include "hip.inc"
#undef SP_HIP
};
#define NTABLE (sizeof(table) / sizeof(table[0]))

static void **slot_of(size_t i) { return (void **)((char *)&sp_hip + table[i].offset); }

void sp_hip_resolve(void)
{
    int missing_req = 0, found_req = 0;
    char missing[512] = "";
    for (size_t i = 0; i < NTABLE; i++) {
        void **slot = slot_of(i);
        if (*slot)
            continue; /* already set (tests, or an earlier pass) */
        void *p = sp_next_real(table[i].name);
        *slot = p;
        if (table[i].need != NEED_REQ)
            continue;
        if (p) {
            found_req++;
        } else {
            missing_req++;
            if (strlen(missing) + strlen(table[i].name) + 2 < sizeof(missing)) {
                strcat(missing, " ");
                strcat(missing, table[i].name);
            }
        }
    }
    static int said; /* once: a missing entry is looked up again at each use */
    if (missing_req && found_req && !__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
        sp_log(SP_LOG_WARN, "runtime-incomplete",
               "the HIP library found lacks functions safepin needs (a stub or a mock?):%s; its "
               "releases are not ordered after device work",
               missing);
    else if (missing_req)
        sp_log(SP_LOG_DEBUG, "debug", "no HIP runtime loaded (yet): HIP hooks pass through");
}

void *sp_hip_any_fn(void)
{
    for (size_t i = 0; i < NTABLE; i++)
        if (*slot_of(i))
            return *slot_of(i);
    return NULL;
}

void sp_hip_forget(void *next)
{
    dlsym_fn real = next ? sp_real_dlsym() : NULL;
    for (size_t i = 0; i < NTABLE; i++)
        __atomic_store_n(slot_of(i), real ? real(next, table[i].name) : NULL, __ATOMIC_RELEASE);
}

static void offer_slot(void **slot, void *fn);

void sp_hip_fill_from(void *handle)
{
    dlsym_fn real = sp_real_dlsym();
    if (!real)
        return;
    for (size_t i = 0; i < NTABLE; i++)
        if (!__atomic_load_n(slot_of(i), __ATOMIC_ACQUIRE))
            offer_slot(slot_of(i), real(handle, table[i].name));
}

void sp_hip_fill_one(const char *name, void *fn)
{
    for (size_t i = 0; i < NTABLE; i++)
        if (strcmp(table[i].name, name) == 0) {
            if (!*slot_of(i))
                *slot_of(i) = fn;
            return;
        }
}

/* Set an empty slot, never one already set (a concurrent fill or the
 * resolver may have set it first: either answer is the runtime's). */
static void offer_slot(void **slot, void *fn)
{
    void *none = NULL;
    if (fn)
        __atomic_compare_exchange_n(slot, &none, fn, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

void sp_hip_offer(void *handle, const char *name, void *fn)
{
    dlsym_fn real = sp_real_dlsym();
    if (handle && handle != RTLD_NEXT && real)
        for (size_t i = 0; i < NTABLE; i++)
            if (!__atomic_load_n(slot_of(i), __ATOMIC_ACQUIRE))
                offer_slot(slot_of(i), real(handle, table[i].name));
    for (size_t i = 0; i < NTABLE; i++)
        if (strcmp(table[i].name, name) == 0)
            offer_slot(slot_of(i), fn);
}
