/*
 * testfail.c - faults injected inside safepin, for its tests:
 * SAFEPIN_TEST_FAIL="what:spec[,what:spec]" (read once, at the first check).
 *
 *   what  alloc   safepin's own allocations (sp_mem_alloc, sp_mem_calloc)
 *         thread  starting the reaper thread
 *         unload  the reaper's dlclose of its reference to the runtime: a
 *                 "failing" one is followed by a pause of 200 ms before
 *                 safepin checks that the runtime is gone (a slow reaper)
 *   spec  N       the Nth attempt fails (1-based)
 *         N+      the Nth attempt and every later one fail
 *         0.P     each attempt fails with probability 0.P (fixed seed)
 *
 * Never set in production: without the variable every check is one load
 * and one branch. A separate variable from SAFEPIN_OPTIONS so that a
 * program's own options never turn faults on by accident.
 */
#include "util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[SP_TF_COUNT] = {"alloc", "thread", "unload"};

static struct {
    int mode; /* 0 none, 1 nth, 2 nth and later, 3 probability */
    unsigned long n;
    double p;
    atomic_ulong tries;
} rules[SP_TF_COUNT];
static atomic_uint_least64_t rng = 0x2545f4914f6cdd1dull;
static atomic_int state; /* 0 unread, 1 reading, 2 read */

static void parse(const char *spec)
{
    char buf[256];
    strncpy(buf, spec, sizeof buf - 1);
    buf[sizeof buf - 1] = '\0';
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(tok, ':');
        if (!colon)
            continue;
        *colon = '\0';
        const char *v = colon + 1;
        for (int i = 0; i < SP_TF_COUNT; i++) {
            if (strcmp(tok, names[i]) != 0)
                continue;
            if (strchr(v, '.')) {
                rules[i].p = strtod(v, NULL);
                rules[i].mode = 3;
            } else {
                char *end = NULL;
                rules[i].n = strtoul(v, &end, 10);
                rules[i].mode = end && *end == '+' ? 2 : 1;
            }
        }
    }
}

/* Read once; an attempt made while another thread reads the variable does
 * not fail (getenv and strtod allocate nothing). */
static int ready(void)
{
    int s = atomic_load_explicit(&state, memory_order_acquire);
    if (s == 2)
        return 1;
    int expect = 0;
    if (s == 0 && atomic_compare_exchange_strong(&state, &expect, 1)) {
        const char *spec = getenv("SAFEPIN_TEST_FAIL");
        if (spec && *spec)
            parse(spec);
        atomic_store_explicit(&state, 2, memory_order_release);
        return 1;
    }
    return 0;
}

static double uniform(void)
{
    uint64_t z = atomic_fetch_add(&rng, 0x9e3779b97f4a7c15ull) + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) / (double)(1ull << 53);
}

int sp_test_fail(sp_test_fail_what w)
{
    if (!ready() || !rules[w].mode)
        return 0;
    unsigned long k = atomic_fetch_add(&rules[w].tries, 1) + 1;
    switch (rules[w].mode) {
    case 1: return k == rules[w].n;
    case 2: return k >= rules[w].n;
    default: return uniform() < rules[w].p;
    }
}
