/*
 * fail.c - injected faults: SIMHIP_FAIL="call:spec[,call:spec...]".
 *
 *   call  register | unregister | event_create | event_record | event_sync |
 *         stream_create | hostfn (hipLaunchHostFunc and hipStreamAddCallback)
 *   spec  N     the Nth call (1-based, counted from the first call) fails
 *         N+    the Nth call and every later one fail
 *         0.P   each call fails with probability 0.P (SIMHIP_FAIL_SEED, default 1)
 *
 * A failed call has no effect and returns the runtime's error for it
 * (hipErrorOutOfMemory for what allocates: register, event and stream
 * create; hipErrorUnknown otherwise). Every call counts, the program's and
 * an LD_PRELOADed library's alike. Read once, at the first runtime call.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char *const names[SH_FAIL_COUNT] = {
    "register", "unregister", "event_create", "event_record", "event_sync",
    "stream_create", "hostfn",
};

static struct {
    int mode;           /* 0 none, 1 nth, 2 nth and later, 3 probability */
    unsigned long n;
    double p;
    atomic_ulong calls;
} rules[SH_FAIL_COUNT];
static atomic_uint_least64_t rng_state;

void sh_fail_init(void)
{
    const char *seed = getenv("SIMHIP_FAIL_SEED");
    atomic_store(&rng_state, seed && *seed ? strtoull(seed, NULL, 0) : 1);
    const char *spec = getenv("SIMHIP_FAIL");
    if (!spec)
        return;
    char buf[512];
    strncpy(buf, spec, sizeof buf - 1);
    buf[sizeof buf - 1] = '\0';
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(tok, ':');
        if (!colon)
            continue;
        *colon = '\0';
        const char *v = colon + 1;
        for (int i = 0; i < SH_FAIL_COUNT; i++) {
            if (strcmp(tok, names[i]) != 0)
                continue;
            if (strchr(v, '.')) {
                rules[i].mode = 3;
                rules[i].p = strtod(v, NULL);
            } else {
                char *end = NULL;
                rules[i].n = strtoul(v, &end, 10);
                rules[i].mode = end && *end == '+' ? 2 : 1;
            }
        }
    }
}

static double next_uniform(void)
{
    uint64_t z = atomic_fetch_add(&rng_state, 0x9e3779b97f4a7c15ull) + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) / (double)(1ull << 53);
}

bool sh_fail(enum sh_fail_call c)
{
    sh_init();
    if (!rules[c].mode)
        return false;
    unsigned long k = atomic_fetch_add(&rules[c].calls, 1) + 1;
    switch (rules[c].mode) {
    case 1: return k == rules[c].n;
    case 2: return k >= rules[c].n;
    default: return next_uniform() < rules[c].p;
    }
}
