/*
 * sites.c - where a diagnostic happens: the stack captured (stack.c's
 * walk, backtrace() where it cannot vouch for a frame), safepin's own
 * frames at its top dropped, and the sites of stacks held only for
 * suppressions, shared.
 */
#include "diag_internal.h"
#include "stack.h"
#include "suppress.h"

#include <execinfo.h>
#include <string.h>

/* Frames of safepin itself at the top of a stack are not shown. */
static int first_foreign_frame(void *const *pc, int n)
{
    if (!sp_diag_self_hi)
        return 0;
    /* Skip up to the last of safepin's own frames near the top (a sanitizer
     * runtime's backtrace interceptor may stand above them). */
    int last = -1;
    for (int i = 0; i < n && i < 16; i++)
        if ((uintptr_t)pc[i] >= sp_diag_self_lo && (uintptr_t)pc[i] < sp_diag_self_hi)
            last = i;
    return last + 1 >= n ? 0 : last + 1;
}

#define SP_MAX_FRAMES 64

/* Sites that show no frame (backtrace=0), held only for suppressions, are
 * shared: a program registers from a few places, so each distinct stack is
 * allocated once and kept for the process's life, and a registration costs
 * no memory of its own for it. Slots go from NULL to a site, never back. At
 * most SHARED_MAX distinct stacks: past that each capture gets its own. */
#define SHARED_MAX 1024
#define SHARED_PROBES 16
static sp_site *shared_sites[SHARED_MAX]; /* atomic */

static int same_frames(const sp_site *s, void *const *pc, int n)
{
    return s->held == n && memcmp(s->pc, pc, (size_t)n * sizeof(void *)) == 0;
}

/* The shared site of pc[0..n) (found, or made now), or NULL when out of
 * memory; a full table: a site of the caller's own. */
static sp_site *shared_site(void *const *pc, int n)
{
    uint64_t h = 14695981039346656037ull; /* FNV-1a over the pcs */
    for (int i = 0; i < n; i++)
        h = (h ^ (uintptr_t)pc[i]) * 1099511628211ull;
    sp_site *mine = NULL;
    for (unsigned k = 0; k < SHARED_PROBES; k++) {
        sp_site **slot = &shared_sites[(h + k) % SHARED_MAX];
        sp_site *s = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
        if (!s) {
            if (!mine) {
                mine = sp_mem_alloc(sizeof(*mine) + (size_t)n * sizeof(void *));
                if (!mine)
                    return NULL;
                *mine = (sp_site){.tid = (pid_t)sp_gettid(), .n = 0, .held = n, .shared = 1};
                memcpy(mine->pc, pc, (size_t)n * sizeof(void *));
            }
            if (__atomic_compare_exchange_n(slot, &s, mine, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
                return mine;
            /* another thread's went there: s is it */
        }
        if (same_frames(s, pc, n)) {
            sp_mem_free(mine);
            return s;
        }
    }
    if (mine)
        mine->shared = 0; /* the table is full around h: the caller's own */
    return mine;
}

/* own: at most this many of safepin's frames stand above the program's;
 * hold: frames held for suppressions to match (0: none beyond those shown,
 * the backtrace option's). */
static inline __attribute__((always_inline)) sp_site *capture(int own, int hold)
{
    int show = sp_opt.backtrace > 0 ? (int)sp_opt.backtrace : 0;
    int want = show > hold ? show : hold;
    if (want <= 0)
        return NULL;
    void *pc[SP_MAX_FRAMES + 8];
    int n = sp_stack_walk(pc, want + own);
    if (n < 0) {
        SP_COUNT(stacks_unwound);
        n = backtrace(pc, want + own); /* what the walk cannot vouch for */
    }
    int skip = first_foreign_frame(pc, n);
    int keep = n - skip;
    if (keep > want)
        keep = want;
    if (show == 0)
        return keep > 0 ? shared_site(pc + skip, keep) : NULL;
    sp_site *s = sp_mem_alloc(sizeof(*s) + (size_t)keep * sizeof(void *));
    if (!s)
        return NULL;
    s->t_ns = sp_now_ns();
    s->tid = (pid_t)sp_gettid();
    s->n = keep < show ? keep : show;
    s->held = keep;
    s->shared = 0;
    memcpy(s->pc, pc + skip, (size_t)keep * sizeof(void *));
    return s;
}

/* noinline: the frame counts below hold only if each is a frame of its own. */
__attribute__((noinline)) sp_site *sp_site_capture(void) { return capture(8, 0); }
__attribute__((noinline)) sp_site *sp_site_capture_entry(void) { return capture(4, 0); }
__attribute__((noinline)) sp_site *sp_site_capture_register(void)
{
    return capture(4, sp_supp_any() ? SP_SUPP_FRAMES : 0);
}
/* Where a diagnostic of code c happens (sp_diag_site, sp_diag, sp_log):
 * held for suppressions of c too. */
__attribute__((noinline)) sp_site *sp_diag_capture(sp_code c)
{
    return capture(8, sp_supp_wanted(c) ? SP_SUPP_FRAMES : 0);
}

void sp_site_free(sp_site *s)
{
    if (s && !s->shared)
        sp_mem_free(s);
}
