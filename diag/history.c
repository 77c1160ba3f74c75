/*
 * history.c - the ring of recent register/unregister/free/release events
 * kept for the post-mortem, and its dump (symbolized in one batch).
 *
 * Written without a lock (a torn entry only garbles a post-mortem line);
 * read by one dying thread at a time.
 */
#include "diag.h"
#include "symbolize.h"

#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef struct hist_event {
    uint64_t t_ns;
    int kind;
    pid_t tid;
    uintptr_t base;
    size_t size;
    int n;
    void *pc[8];
} hist_event;

#define SP_HIST_MAX 4096
static hist_event hist[SP_HIST_MAX];
static uint64_t hist_n;

static const char *const hist_kind[SP_EV_COUNT] = {
#define SP_EVENT(id, name) name,
#include "events.inc"
#undef SP_EVENT
};

void sp_history_add(int kind, uintptr_t base, size_t size, const sp_site *site)
{
    if (sp_opt.history <= 0)
        return;
    uint64_t cap = (uint64_t)sp_opt.history < SP_HIST_MAX ? (uint64_t)sp_opt.history : SP_HIST_MAX;
    uint64_t i = __atomic_fetch_add(&hist_n, 1, __ATOMIC_RELAXED) % cap;
    hist_event *e = &hist[i];
    /* Written without a lock: a torn entry only garbles a post-mortem line. */
    __atomic_store_n(&e->t_ns, sp_now_ns(), __ATOMIC_RELAXED);
    __atomic_store_n(&e->kind, kind, __ATOMIC_RELAXED);
    __atomic_store_n(&e->tid, (pid_t)sp_gettid(), __ATOMIC_RELAXED);
    __atomic_store_n(&e->base, base, __ATOMIC_RELAXED);
    __atomic_store_n(&e->size, size, __ATOMIC_RELAXED);
    int n = 0;
    if (site) {
        for (int j = 0; j < site->n && n < 8; j++)
            __atomic_store_n(&e->pc[n++], site->pc[j], __ATOMIC_RELAXED);
    }
    __atomic_store_n(&e->n, n, __ATOMIC_RELAXED);
}

/* Post-mortem symbolization: every distinct frame of the events printed,
 * symbolized in one batch (sp_symbolize_dying), found again by hash. Used by
 * one dying thread at a time (the post-mortem's owner). */
#define PM_MAX SP_SYM_BATCH
static void *pm_pc[PM_MAX];
static unsigned char pm_adj[PM_MAX];
static sp_frame_info pm_fi[PM_MAX];
static int pm_n, pm_done; /* frames known; frames symbolized */
static unsigned short pm_slot[2 * PM_MAX]; /* index + 1; 0: empty */

static int pm_index(void *pc, int adj, int add)
{
    uintptr_t x = (uintptr_t)pc * 0x9E3779B97F4A7C15ull + (uintptr_t)adj;
    unsigned h = (unsigned)(x >> 40) % (2 * PM_MAX);
    for (unsigned probe = 0; probe < 2 * PM_MAX; probe++, h = (h + 1) % (2 * PM_MAX)) {
        unsigned s = pm_slot[h];
        if (!s) {
            if (!add || pm_n >= PM_MAX)
                return -1;
            pm_pc[pm_n] = pc;
            pm_adj[pm_n] = (unsigned char)adj;
            pm_slot[h] = (unsigned short)++pm_n;
            return pm_n - 1;
        }
        if (pm_pc[s - 1] == pc && pm_adj[s - 1] == adj)
            return (int)s - 1;
    }
    return -1;
}

/* A copy of history event k if it is to be printed: every event (addr 0),
 * those overlapping addr (others 0), or the others (others 1). */
static int hist_pick(uint64_t k, uint64_t cap, uintptr_t addr, int others, hist_event *out)
{
    const hist_event *e = &hist[k % cap];
    out->t_ns = __atomic_load_n(&e->t_ns, __ATOMIC_RELAXED);
    out->kind = __atomic_load_n(&e->kind, __ATOMIC_RELAXED);
    out->tid = __atomic_load_n(&e->tid, __ATOMIC_RELAXED);
    out->base = __atomic_load_n(&e->base, __ATOMIC_RELAXED);
    out->size = __atomic_load_n(&e->size, __ATOMIC_RELAXED);
    out->n = __atomic_load_n(&e->n, __ATOMIC_RELAXED);
    if (out->n < 0 || out->n > 8)
        out->n = 0;
    for (int j = 0; j < out->n; j++)
        out->pc[j] = __atomic_load_n(&e->pc[j], __ATOMIC_RELAXED);
    if (out->kind < 0 || out->kind >= SP_EV_COUNT)
        return 0;
    int held = addr >= out->base && addr < out->base + (out->size ? out->size : 1);
    return !addr || held != others;
}

void sp_history_dump(uintptr_t addr, int others, uint64_t deadline_ns)
{
    uint64_t total = __atomic_load_n(&hist_n, __ATOMIC_RELAXED);
    if (sp_opt.history <= 0 || total == 0)
        return;
    uint64_t cap = (uint64_t)sp_opt.history < SP_HIST_MAX ? (uint64_t)sp_opt.history : SP_HIST_MAX;
    uint64_t start = total > cap ? total - cap : 0;
    hist_event ev;
    for (uint64_t k = start; k < total; k++)
        if (hist_pick(k, cap, addr, others, &ev))
            for (int j = 0; j < ev.n; j++)
                pm_index(ev.pc[j], 1, 1);
    if (pm_n > pm_done) {
        sp_symbolize_dying(pm_pc + pm_done, pm_adj + pm_done, pm_n - pm_done, pm_fi + pm_done,
                           deadline_ns);
        pm_done = pm_n;
    }
    uint64_t t0 = sp_now_ns();
    for (uint64_t k = start; k < total; k++) {
        if (!hist_pick(k, cap, addr, others, &ev))
            continue;
        char buf[256];
        int w = snprintf(buf, sizeof(buf), "  [%.3f ms ago] %-10s 0x%lx size %zu (thread %d)\n",
                         (double)(t0 - ev.t_ns) / 1e6, hist_kind[ev.kind], (unsigned long)ev.base,
                         ev.size, (int)ev.tid);
        if (w > 0)
            sp_log_write(buf, (size_t)w < sizeof(buf) ? (size_t)w : sizeof(buf) - 1);
        for (int j = 0; j < ev.n; j++) {
            int i = pm_index(ev.pc[j], 1, 0);
            sp_frame_info plain;
            if (i < 0 || i >= pm_done)
                sp_symbolize_plain(ev.pc[j], &plain);
            w = sp_format_frame(buf, sizeof(buf), j, ev.pc[j],
                                i >= 0 && i < pm_done ? &pm_fi[i] : &plain);
            if (w > 0)
                sp_log_write(buf, (size_t)w < sizeof(buf) ? (size_t)w : sizeof(buf) - 1);
        }
    }
}

void sp_pm_add(void *pc) { pm_index(pc, 1, 1); }

void sp_pm_symbolize(uint64_t deadline_ns)
{
    if (pm_n > pm_done) {
        sp_symbolize_dying(pm_pc + pm_done, pm_adj + pm_done, pm_n - pm_done, pm_fi + pm_done,
                           deadline_ns);
        pm_done = pm_n;
    }
}

const sp_frame_info *sp_pm_frame(void *pc)
{
    int i = pm_index(pc, 1, 0);
    return i >= 0 && i < pm_done ? &pm_fi[i] : NULL;
}

/* Fork child: the child starts with none of its parent's events. */
void sp_history_fork_child(void) { hist_n = 0; }
