/*
 * hip_shims.c - the exported HIP symbols, nothing else: one shim per HOOK
 * line of hip.inc, each one call into its logic (hip_hooks.c, hip_face.c) in
 * a hook's body (SP_API_HOOK: cancellation disabled, the api-error line).
 * Compiled with -fvisibility=hidden, listed in exports.map. An
 * unversioned definition here interposes libamdhip64's versioned symbols
 * (hipHostRegister@@hip_4.2) for every program started with LD_PRELOAD.
 */
#include "api_error.h"
#include "hip.h"

#include <pthread.h>
#include <string.h>

#define SP_EXPORT __attribute__((visibility("default"), no_sanitize_address))

#define SP_HIP(kind, need, ret, name, params, args, logic) SP_HIP_SHIM_##kind(ret, name, params, args, logic)
#define SP_HIP_SHIM_HOOK(ret, name, params, args, logic)                       \
    SP_EXPORT ret name params { SP_API_HOOK(ret, SP_RT_HIP, #name, "", args, logic args); }
#define SP_HIP_SHIM_CALL(ret, name, params, args, logic)
#include "hip.inc"
#undef SP_HIP
#undef SP_HIP_SHIM_HOOK
#undef SP_HIP_SHIM_CALL

void *sp_shim_for(const char *name)
{
    static const struct {
        const char *name;
        void *fn;
    } shims[] = {
#define SP_HIP(kind, need, ret, name, params, args, logic) SP_HIP_ENTRY_##kind(name)
#define SP_HIP_ENTRY_HOOK(name) {#name, (void *)name},
#define SP_HIP_ENTRY_CALL(name)
#include "hip.inc"
#undef SP_HIP
#undef SP_HIP_ENTRY_HOOK
#undef SP_HIP_ENTRY_CALL
    };
    if (!name || name[0] != 'h')
        return NULL;
    for (size_t i = 0; i < sizeof(shims) / sizeof(shims[0]); i++)
        if (strcmp(shims[i].name, name) == 0)
            return shims[i].fn;
    return NULL;
}
