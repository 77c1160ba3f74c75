/*
 * summary.c - the end of the run: release latencies (recorded by the
 * reaper) and their percentiles, the summary (counts, hazards prevented
 * and what the runtimes do without safepin, violations by code,
 * suppressions used), then the report; on safepin's own stack.
 */
#include "diag_internal.h"
#include "ownstack.h"
#include "suppress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- release latencies ---------------------------------------------- */

static uint64_t lat[SP_LAT_MAX];
uint64_t sp_diag_lat_n;

void sp_record_latency(uint64_t unregister_call_ns, uint64_t done_ns)
{
    uint64_t i = __atomic_fetch_add(&sp_diag_lat_n, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&lat[i % SP_LAT_MAX], done_ns - unregister_call_ns, __ATOMIC_RELAXED);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* ---- end of run ------------------------------------------------------- */

static void pct(uint64_t *v, uint64_t n, double *p50, double *p90, double *p99, double *max)
{
    *p50 = *p90 = *p99 = *max = 0;
    if (!n)
        return;
    qsort(v, n, sizeof(*v), cmp_u64);
    *p50 = v[(n - 1) * 50 / 100] / 1e3;
    *p90 = v[(n - 1) * 90 / 100] / 1e3;
    *p99 = v[(n - 1) * 99 / 100] / 1e3;
    *max = v[n - 1] / 1e3;
}

/* The summary's hazards: how many, by kind, and what the runtimes the
 * program used do without safepin (each face's hazard_bare). */
static void say_hazards(void)
{
    uint64_t total = sp_hazards_prevented();
    if (!total)
        return;
    char line[512];
    size_t o = 0;
    for (int h = 0; h < SP_HZ_COUNT; h++) {
        uint64_t n = __atomic_load_n(&sp_hazard_count[h], __ATOMIC_RELAXED);
        int w = n ? snprintf(line + o, sizeof(line) - o, "%s%llu %s", o ? ", " : "",
                             (unsigned long long)n, sp_hazard_table[h].name)
                  : 0;
        if (w < 0 || (size_t)w >= sizeof(line) - o)
            break;
        o += (size_t)w;
    }
    sp_log(SP_LOG_ERROR, "summary", "%llu hazard%s prevented: %s", (unsigned long long)total,
           total == 1 ? "" : "s", line);
    unsigned used = __atomic_load_n(&sp_diag_rt_used, __ATOMIC_RELAXED);
    for (int h = 0; h < SP_HZ_COUNT; h++) {
        if (!__atomic_load_n(&sp_hazard_count[h], __ATOMIC_RELAXED))
            continue;
        for (int rt = 0; rt < SP_DIAG_RT_MAX; rt++) {
            const char *bare = sp_diag_rt_bare[rt] ? sp_diag_rt_bare[rt][h] : NULL;
            if ((used & 1u << rt) && sp_diag_rt_names[rt] && bare && bare[0])
                sp_log(SP_LOG_ERROR, "summary", "  %s: without safepin (%s): %s",
                       sp_hazard_table[h].name, sp_diag_rt_names[rt], bare);
        }
    }
}

static void finish_body(int exit_status)
{
    sp_supp_flush();
    uint64_t n = __atomic_load_n(&sp_diag_lat_n, __ATOMIC_RELAXED);
    if (n > SP_LAT_MAX)
        n = SP_LAT_MAX;
    static uint64_t copy[SP_LAT_MAX];
    memcpy(copy, lat, n * sizeof(uint64_t));
    double p50, p90, p99, max;
    pct(copy, n, &p50, &p90, &p99, &max);

    /* What the shipped default suppressions silence is not worth a summary
     * of its own; what the user's silence is. */
    int noteworthy = sp_violations() || sp_hazards_prevented() || SP_STAT(deferred_frees) ||
                     SP_STAT(deferred_unmaps) ||
                     SP_STAT(revived) || SP_STAT(waits_for_release) || sp_supp_suppressed_user();
    if (sp_opt.summary && (noteworthy || sp_opt.log_level >= SP_LOG_INFO)) {
        sp_log(SP_LOG_ERROR, "summary",
               "%llu registrations (%llu nested, %llu revived), %llu releases completed, "
               "%llu deferred frees, %llu deferred unmaps, %llu leaks",
               (unsigned long long)SP_STAT(registrations), (unsigned long long)SP_STAT(nested),
               (unsigned long long)SP_STAT(revived), (unsigned long long)SP_STAT(releases_completed),
               (unsigned long long)SP_STAT(deferred_frees),
               (unsigned long long)SP_STAT(deferred_unmaps), (unsigned long long)SP_STAT(leaks));
        if (n)
            sp_log(SP_LOG_ERROR, "summary",
                   "release latency (unregister call to real unregister done): p50 %.1f us, "
                   "p90 %.1f us, p99 %.1f us, max %.1f us over %llu releases",
                   p50, p90, p99, max, (unsigned long long)n);
        char line[512];
        size_t o = 0;
        for (int c = 0; c < SP_CODE_COUNT; c++) {
            if (!SP_STAT(code_count[c]) || c == SP_HAZARD_PREVENTED)
                continue; /* (hazards have their line) */
            int w = snprintf(line + o, sizeof(line) - o, "%s%s=%llu", o ? ", " : "",
                             sp_code_table[c].name, (unsigned long long)SP_STAT(code_count[c]));
            if (w < 0 || (size_t)w >= sizeof(line) - o)
                break;
            o += (size_t)w;
        }
        char supp[64] = "";
        if (sp_supp_suppressed_total())
            snprintf(supp, sizeof(supp), " (%llu suppressed)",
                     (unsigned long long)sp_supp_suppressed_total());
        say_hazards();
        sp_log(SP_LOG_ERROR, "summary", "%llu violations%s%s%s",
               (unsigned long long)sp_violations(), supp, o ? ": " : "", o ? line : "");
        /* As LSan's "Suppressions used": count and line, where it was read. */
        for (int i = 0; i < sp_supp_count(); i++) {
            const sp_supp *e = sp_supp_get(i);
            uint64_t hits = __atomic_load_n(&e->hits, __ATOMIC_RELAXED);
            if (hits)
                sp_log(SP_LOG_ERROR, "summary", "suppression used: %llu x %s:%s (%s:%u)",
                       (unsigned long long)hits,
                       e->code == SP_SUPP_CODE_ANY ? "*" : sp_code_table[e->code].name, e->pattern,
                       e->is_default ? "default suppressions" : sp_supp_source(e->source),
                       e->line);
        }
    }
    sp_report_at_exit(exit_status, p50, p90, p99, max, n);
}

static void finish_own(void *p) { finish_body(*(int *)p); }

void sp_diag_finish(int exit_status) { sp_call_on_own_stack(finish_own, &exit_status); }
