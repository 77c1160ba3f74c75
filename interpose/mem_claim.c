/*
 * mem_claim.c - freed-while-registered: the registrations that a free,
 * realloc, munmap, mremap, fixed mmap or shmdt gives up are released and
 * marked freed (G7's rule for malloc blocks), and the diagnostic said,
 * at once or after the real call (sp_claim_quiet, sp_claim_say).
 */
#include "mem_int.h"

#include <string.h>

/* Lock held. G7: a block [a, a+n) the program frees gives up r when it
 * contains r's base or covers a whole page of r; a neighbour that only
 * shares an edge page of a page-rounded registration does not. */
static int frees_range(uintptr_t a, size_t n, const sp_range *r)
{
    if (r->base >= a && r->base - a < n)
        return 1;
    uintptr_t lo = a > r->base ? a : r->base;
    uintptr_t end = a + n, r_end = r->base + r->size;
    uintptr_t hi = end < r_end ? end : r_end;
    size_t pg = sp_page_size();
    uintptr_t first = (lo + pg - 1) & ~(uintptr_t)(pg - 1);
    return first >= lo && first < hi && hi - first >= pg;
}

/* munmap of pages of a live range that leaves its base mapped: see
 * claim_one. */
static void say_part_unmapped(sp_range *r, claim_ctx *c)
{
    sp_diag(SP_FREED_WHILE_REGISTERED, r,
            "%s(0x%lx, %zu bytes) of part of the registered range 0x%lx (%zu bytes): its base stays "
            "mapped, so the range stays registered (and usable) until it is unregistered; the "
            "unmapped pages are gone at once, as without safepin",
            c->what, (unsigned long)c->addr, c->len, (unsigned long)r->base, r->size);
}

static void say_freed(sp_range *r, claim_ctx *c)
{
    sp_diag(SP_FREED_WHILE_REGISTERED, r,
            "%s(0x%lx, %zu bytes) of memory still registered: the range 0x%lx (%zu bytes) is "
            "released first and the memory kept alive until then",
            c->what, (unsigned long)c->addr, c->len, (unsigned long)r->base, r->size);
    sp_hazard_prevented(SP_HZ_STALE_REGISTRATION, r, "%s(0x%lx) of registered memory", c->what,
                        (unsigned long)c->addr);
    sp_history_add(SP_EV_FREE, r->base, r->size, c->site);
}

static void report_live(sp_range *r, claim_ctx *c)
{
    if (!c->site)
        c->site = sp_site_capture();
    if (!sp_sites(r)->unreg && c->site) {
        /* The range keeps its own copy of where it was freed. */
        size_t sz = sizeof(sp_site) + (size_t)c->site->n * sizeof(void *);
        sp_site *copy = sp_mem_alloc(sz);
        if (copy) {
            memcpy(copy, c->site, sz);
            sp_sites(r)->unreg = copy;
        }
    }
    r->t_unregister_ns = sp_now_ns();
    sp_reaper_owe(r->base);
    if (c->quiet && c->n_quiet < (int)sizeof(c->quiet_part)) {
        c->quiet_part[c->n_quiet] = 0;
        c->quiet_base[c->n_quiet++] = r->base;
    } else {
        say_freed(r, c);
    }
}

/* Lock held. G7 for munmap: unmapping pages of a live range that leave its
 * base mapped (a program shrinking a buffer it still uses) does not release
 * it: without safepin the registration is whole until the program
 * unregisters it by its base, and the head keeps working. The pages go at
 * once, as they do without safepin. */
static int keeps_live_range(const sp_range *r, const claim_ctx *c)
{
    return c->base_only && r->state == SP_RANGE_LIVE &&
           !(r->base >= c->addr && r->base - c->addr < c->len);
}

static int claim_one(sp_range *r, void *arg)
{
    claim_ctx *c = arg;
    if (c->block && !frees_range(c->addr, c->len, r))
        return 0;
    if (keeps_live_range(r, c)) {
        if (c->quiet && c->n_quiet < (int)sizeof(c->quiet_part)) {
            c->quiet_part[c->n_quiet] = 1;
            c->quiet_base[c->n_quiet++] = r->base;
        } else {
            say_part_unmapped(r, c);
        }
        return 0;
    }
    if (c->live_only) {
        c->n += r->state == SP_RANGE_LIVE;
        return 0;
    }
    if (r->state == SP_RANGE_LIVE)
        report_live(r, c);
    sp_reaper_claim(r);
    c->n++;
    return 0;
}

/* Lock held. The program gives up [addr, addr+len) (what: the call):
 * release the LIVE registrations there (freed-while-registered) and mark
 * every one there freed. block: a malloc block (G7's rule). base_only: the
 * span is cut off a mapping whose head stays (a shrinking mremap): a LIVE
 * range whose base stays mapped is kept, as munmap keeps it. Returns how
 * many ranges it claimed. */
int sp_claim(uintptr_t addr, size_t len, const char *what, int block, int base_only)
{
    claim_ctx c = {what, addr, len, block, 0, 0, NULL, 0, 0, {0}, {0}, base_only};
    if (!len)
        return 0;
    sp_reaper_wait_registering(addr, len);
    sp_reg_for_overlaps(addr, len, claim_one, &c);
    sp_site_free(c.site);
    return c.n;
}

/* Lock held. sp_claim(), but the freed-while-registered diagnostics wait for
 * sp_claim_say(): a diagnostic maps memory of its own (the symbolizer, the
 * allocator, a sanitizer runtime's bookkeeping), which the kernel may place
 * in a hole of the very span the program is unmapping; unmapping first
 * keeps safepin from unmapping its own new memory. */
void sp_claim_quiet(claim_ctx *c, uintptr_t addr, size_t len, const char *what)
{
    *c = (claim_ctx){what, addr, len, 0, 0, 0, NULL, 1, 0, {0}, {0}, 1};
    if (!len)
        return;
    sp_reaper_wait_registering(addr, len);
    sp_reg_for_overlaps(addr, len, claim_one, c);
}

/* Lock held. The diagnostics sp_claim_quiet() kept back, for the ranges still
 * there (a range released meanwhile is said without its details). */
void sp_claim_say(claim_ctx *c)
{
    for (int i = 0; i < c->n_quiet; i++) {
        sp_range *r = sp_reg_find_containing(c->quiet_base[i]);
        if (r && r->base == c->quiet_base[i] && c->quiet_part[i])
            say_part_unmapped(r, c);
        else if (r && r->base == c->quiet_base[i])
            say_freed(r, c);
        else
            sp_diag(SP_FREED_WHILE_REGISTERED, NULL,
                    "%s(0x%lx, %zu bytes) of memory still registered at 0x%lx: released first",
                    c->what, (unsigned long)c->addr, c->len, (unsigned long)c->quiet_base[i]);
    }
    sp_site_free(c->site);
    c->site = NULL;
}

/* Lock held. How many LIVE registrations sp_claim() would release. */
int sp_live_in(uintptr_t addr, size_t len, int block)
{
    claim_ctx c = {NULL, addr, len, block, 1, 0, NULL, 0, 0, {0}, {0}, 0};
    if (len)
        sp_reg_for_overlaps(addr, len, claim_one, &c);
    return c.n;
}
