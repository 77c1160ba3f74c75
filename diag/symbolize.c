/*
 * symbolize.c - function names and file:line for recorded stacks.
 *
 * dladdr() names only exported symbols. Like the sanitizers, which call an
 * external symbolizer, safepin asks addr2line (binutils) for function,
 * file and line: one run per module of a stack, with LD_PRELOAD removed
 * from its environment (addr2line.c: started invisibly to the program and
 * bounded in time). Falls back to dladdr (module+offset) when addr2line
 * is missing, does not answer in time, or symbolize=0. Answers are cached
 * by pc.
 *
 * Locks: cache_lock guards the cache; never held with addr2line.c's. A
 * forked child starts with a fresh one. The dying path takes none.
 */
#include "symbolize_internal.h"
#include "diag.h"
#include "options.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define RUN_MS 5000       /* one ordinary addr2line run, at most */
#define BATCH_MS 10000    /* sp_symbolize_many starts no run after this */

void sp_sym_copy_str(char *dst, size_t n, const char *src)
{
    size_t l = strlen(src);
    if (l >= n)
        l = n - 1;
    memcpy(dst, src, l);
    dst[l] = '\0';
}

/* Address as addr2line wants it: relative to the load base for shared
 * objects and PIE, absolute for ET_EXEC. */
static uintptr_t file_address(uintptr_t pc, const Dl_info *info)
{
    const ElfW(Ehdr) *eh = info->dli_fbase;
    if (eh && eh->e_type == ET_EXEC)
        return pc;
    return pc - (uintptr_t)info->dli_fbase;
}

/* This thread is inside sp_symbolize(_many), holding or about to take its
 * locks: a signal handler on it (one that calls exit(), which writes the
 * report) gets dladdr's names, not a wait on a lock its own thread holds. */
static __thread int tls_symbolizing __attribute__((tls_model("initial-exec")));

/* ---- frames of many modules --------------------------------------------- */

static void plain(void *pc, Dl_info *info, int *have, sp_frame_info *out)
{
    memset(out, 0, sizeof(*out));
    *have = dladdr(pc, info) && info->dli_fname;
    if (!*have)
        return;
    const char *mod = strrchr(info->dli_fname, '/');
    sp_sym_copy_str(out->module, sizeof(out->module), mod ? mod + 1 : info->dli_fname);
    out->module_offset = (uintptr_t)pc - (uintptr_t)info->dli_fbase;
    if (info->dli_sname) {
        sp_sym_copy_str(out->func, sizeof(out->func), info->dli_sname);
        out->func_offset = (uintptr_t)pc - (uintptr_t)info->dli_saddr;
        out->has_offset = 1;
    }
}

void sp_symbolize_plain(void *pc, sp_frame_info *out)
{
    Dl_info info;
    int have;
    plain(pc, &info, &have, out);
}

/* addr2line for every frame with todo[i] set (cleared as done), grouped by
 * module, at most `max` addresses a run (addr and idx hold that many). A run
 * starts only before start_by_ns, and must answer within run_ns of its start
 * (0: by start_by_ns). 1 if frames were left because start_by_ns passed. */
static int symbolize_frames(void *const *pc, const unsigned char *adj, int n, sp_frame_info *out,
                            const Dl_info *info, unsigned char *todo, int dying,
                            uint64_t start_by_ns, uint64_t run_ns, uintptr_t *addr, int *idx,
                            int max)
{
    for (int i = 0; i < n; i++) {
        if (!todo[i])
            continue;
        if (!sp_a2l_path[0] || __atomic_load_n(&sp_a2l_broken, __ATOMIC_RELAXED))
            return 0;
        uint64_t now = sp_now_ns();
        if (now >= start_by_ns)
            return 1;
        const char *path = info[i].dli_fname;
        char exe[512];
        if (!path[0]) { /* the main program */
            ssize_t l = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
            if (l <= 0) {
                todo[i] = 0;
                continue;
            }
            exe[l] = '\0';
            path = exe;
        }
        int k = 0;
        for (int j = i; j < n && k < max; j++) {
            if (!todo[j] || info[j].dli_fbase != info[i].dli_fbase)
                continue;
            /* Return addresses point after the call: look up the call. */
            addr[k] = file_address((uintptr_t)pc[j] - (adj[j] ? 1 : 0), &info[j]);
            idx[k++] = j;
            todo[j] = 0;
        }
        sp_a2l_run(dying, path, addr, idx, k, out, run_ns ? now + run_ns : start_by_ns);
    }
    return 0;
}

/* Results by pc, so a stack seen again costs no new addr2line (cache_lock).
 * Set-associative: a pc has CACHE_WAYS slots to live in, so the few pcs a
 * program's diagnostics keep repeating never evict one another (with one
 * slot per pc, two that hashed alike cost two addr2line runs per stack).
 * An entry also names its module (load base and path), so a library loaded
 * where an unloaded one was never gets the old one's names. */
#define CACHE_SETS 64
#define CACHE_WAYS SP_SYM_CACHE_WAYS
static struct cache_entry {
    void *pc;
    int adjusted;
    const void *fbase;
    uint64_t path_hash;
    sp_frame_info fi;
} cache[CACHE_SETS][CACHE_WAYS];
static unsigned char cache_next[CACHE_SETS]; /* the way a full set gives up next */
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

static struct cache_entry *cache_set(void *pc, int adjusted)
{
    uintptr_t x = (uintptr_t)pc * 0x9E3779B97F4A7C15ull + (uintptr_t)adjusted;
    return cache[(x >> 40) % CACHE_SETS];
}

unsigned sp_symbolize_cache_set(void *pc, int adjusted)
{
    return (unsigned)(cache_set(pc, adjusted) - cache[0]) / CACHE_WAYS;
}

static uint64_t path_hash(const char *s)
{
    uint64_t h = 14695981039346656037ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

void sp_symbolize_stamp(void *pc, sp_module_stamp *out)
{
    Dl_info info;
    memset(out, 0, sizeof(*out));
    if (dladdr(pc, &info) && info.dli_fname) {
        out->fbase = info.dli_fbase;
        out->path_hash = path_hash(info.dli_fname);
    }
}

static int cache_match(const struct cache_entry *e, void *pc, int adjusted, const Dl_info *info,
                       uint64_t hash)
{
    return e->pc == pc && e->adjusted == adjusted && e->fbase == info->dli_fbase &&
           e->path_hash == hash;
}

/* Fills out[i] for each todo[i] found in the cache, clearing todo[i]. */
static void cache_take(void *const *pc, const unsigned char *adj, int n, const Dl_info *info,
                       sp_frame_info *out, unsigned char *todo)
{
    pthread_mutex_lock(&cache_lock);
    for (int i = 0; i < n; i++) {
        if (!todo[i])
            continue;
        struct cache_entry *set = cache_set(pc[i], adj[i]);
        uint64_t hash = path_hash(info[i].dli_fname);
        for (int w = 0; todo[i] && w < CACHE_WAYS; w++)
            if (cache_match(&set[w], pc[i], adj[i], &info[i], hash)) {
                out[i] = set[w].fi;
                todo[i] = 0;
            }
    }
    pthread_mutex_unlock(&cache_lock);
}

/* Keeps out[i] for each frame asked (fresh[i]) and answered (!todo[i]). */
static void cache_keep(void *const *pc, const unsigned char *adj, int n, const Dl_info *info,
                       const sp_frame_info *out, const unsigned char *fresh,
                       const unsigned char *todo)
{
    pthread_mutex_lock(&cache_lock);
    for (int i = 0; i < n; i++) {
        if (!fresh[i] || todo[i])
            continue;
        struct cache_entry *set = cache_set(pc[i], adj[i]);
        uint64_t hash = path_hash(info[i].dli_fname);
        int w = 0; /* the entry for pc (of any module), a free one, or the set's next */
        while (w < CACHE_WAYS && set[w].pc && !(set[w].pc == pc[i] && set[w].adjusted == adj[i]))
            w++;
        if (w == CACHE_WAYS) {
            unsigned s = sp_symbolize_cache_set(pc[i], adj[i]);
            w = cache_next[s];
            cache_next[s] = (unsigned char)((w + 1) % CACHE_WAYS);
        }
        set[w] = (struct cache_entry){pc[i], adj[i], info[i].dli_fbase, hash, out[i]};
    }
    pthread_mutex_unlock(&cache_lock);
}

void sp_symbolize_some(void *const *pc, int n, const unsigned char *want, sp_frame_info *out)
{
    Dl_info info[SP_SYM_MAX];
    unsigned char adj[SP_SYM_MAX], todo[SP_SYM_MAX], fresh[SP_SYM_MAX];
    uintptr_t addr[SP_SYM_MAX];
    int idx[SP_SYM_MAX];
    if (n > SP_SYM_MAX)
        n = SP_SYM_MAX;
    for (int i = 0; i < n; i++) {
        int have = 0;
        memset(&info[i], 0, sizeof(info[i]));
        if (!want || want[i])
            plain(pc[i], &info[i], &have, &out[i]);
        adj[i] = 1; /* every frame of a site is a return address */
        todo[i] = (unsigned char)have;
    }
    if (!sp_opt.symbolize || !sp_a2l_path[0])
        return;
    if (tls_symbolizing)
        return; /* a signal handler (exit()) interrupted this thread's own: its locks are held */
    int cancel;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
    tls_symbolizing = 1;
    cache_take(pc, adj, n, info, out, todo);
    memcpy(fresh, todo, sizeof(fresh));
    symbolize_frames(pc, adj, n, out, info, todo, 0, sp_now_ns() + RUN_MS * 1000000ull, 0, addr,
                     idx, SP_SYM_MAX);
    cache_keep(pc, adj, n, info, out, fresh, todo);
    tls_symbolizing = 0;
    pthread_setcancelstate(cancel, NULL);
}

void sp_symbolize(void *const *pc, int n, sp_frame_info *out) { sp_symbolize_some(pc, n, NULL, out); }

int sp_symbolize_many(void *const *pc, const unsigned char *adj, int n, sp_frame_info *out)
{
    Dl_info *info = sp_mem_alloc((size_t)(n > 0 ? n : 1) * sizeof(*info));
    unsigned char *todo = sp_mem_alloc((size_t)(n > 0 ? n : 1));
    uintptr_t *addr = sp_mem_alloc(RUN_MAX_ADDRS * sizeof(*addr));
    int *idx = sp_mem_alloc(RUN_MAX_ADDRS * sizeof(*idx));
    int ok = info && todo && addr && idx;
    for (int i = 0; i < n; i++) {
        Dl_info here;
        int have;
        plain(pc[i], ok ? &info[i] : &here, &have, &out[i]);
        if (ok)
            todo[i] = (unsigned char)have;
    }
    if (ok && sp_opt.symbolize && sp_a2l_path[0] && !tls_symbolizing) {
        int cancel;
        pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
        tls_symbolizing = 1;
        cache_take(pc, adj, n, info, out, todo);
        if (symbolize_frames(pc, adj, n, out, info, todo, 0,
                             sp_now_ns() + BATCH_MS * 1000000ull, RUN_MS * 1000000ull, addr, idx,
                             RUN_MAX_ADDRS))
            sp_log(SP_LOG_WARN, "symbolize",
                   "symbolizing took over %d s: the remaining frames show module+offset",
                   BATCH_MS / 1000);
        tls_symbolizing = 0;
        pthread_setcancelstate(cancel, NULL);
    }
    sp_mem_free(info);
    sp_mem_free(todo);
    sp_mem_free(addr);
    sp_mem_free(idx);
    return ok ? 0 : -1;
}

void sp_symbolize_dying(void *const *pc, const unsigned char *adj, int n, sp_frame_info *out,
                        uint64_t deadline_ns)
{
    static Dl_info info[SP_SYM_BATCH];
    static unsigned char todo[SP_SYM_BATCH];
    if (n > SP_SYM_BATCH)
        n = SP_SYM_BATCH;
    for (int i = 0; i < n; i++) {
        int have;
        plain(pc[i], &info[i], &have, &out[i]);
        todo[i] = (unsigned char)have;
    }
    static uintptr_t addr[RUN_MAX_ADDRS]; /* a signal stack may be small */
    static int idx[RUN_MAX_ADDRS];
    if (sp_opt.symbolize)
        symbolize_frames(pc, adj, n, out, info, todo, 1, deadline_ns, 0, addr, idx, RUN_MAX_ADDRS);
}

/* ---- fork --------------------------------------------------------------- */

void sp_symbolize_fork_child(int prepared)
{
    sp_a2l_fork_child(prepared);
    /* The parent's other threads are gone, maybe holding these. */
    if (pthread_mutex_trylock(&cache_lock) == 0)
        pthread_mutex_unlock(&cache_lock);
    else /* an entry may be half written */
        memset(cache, 0, sizeof(cache));
    pthread_mutex_init(&cache_lock, NULL);
}

int sp_format_frame(char *buf, size_t n, int i, void *pc, const sp_frame_info *f)
{
    const char *mod = f->module[0] ? f->module : "<main>";
    if (f->file[0] && f->func[0] && f->line > 0)
        return snprintf(buf, n, "    #%d %p in %s %s:%d (%s+0x%lx)\n", i, pc, f->func, f->file,
                        f->line, mod, (unsigned long)f->module_offset);
    if (f->file[0] && f->func[0])
        return snprintf(buf, n, "    #%d %p in %s %s (%s+0x%lx)\n", i, pc, f->func, f->file, mod,
                        (unsigned long)f->module_offset);
    if (f->func[0] && f->has_offset)
        return snprintf(buf, n, "    #%d %p in %s+0x%lx (%s+0x%lx)\n", i, pc, f->func,
                        (unsigned long)f->func_offset, mod, (unsigned long)f->module_offset);
    if (f->func[0])
        return snprintf(buf, n, "    #%d %p in %s (%s+0x%lx)\n", i, pc, f->func, mod,
                        (unsigned long)f->module_offset);
    if (f->module[0])
        return snprintf(buf, n, "    #%d %p in ?? (%s+0x%lx)\n", i, pc, mod,
                        (unsigned long)f->module_offset);
    return snprintf(buf, n, "    #%d %p in ??\n", i, pc);
}
