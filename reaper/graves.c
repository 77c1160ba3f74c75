/*
 * graves.c - what is remembered of completed releases (reaper.c records
 * them): the bases released recently, and the latest ones' stacks for a
 * double unregister's diagnostic; the bases owed one successful
 * unregister.
 */
#include "reaper.h"
#include "reaper_internal.h"
#include "diag.h"

int sp_reaper_released_view(uintptr_t base, sp_diag_range *out)
{
    for (unsigned k = 0; k < SP_GRAVE_SITES && k < sp_rp.graves_i; k++) {
        const sp_grave *g = &sp_rp.graves[(sp_rp.graves_i - 1 - k) % SP_GRAVE_SITES];
        if (g->base == base && base) {
            *out = (sp_diag_range){g->base, g->size, g->rt, g->reg, g->unreg};
            return 1;
        }
    }
    return 0;
}

int sp_reaper_recently_released(uintptr_t base)
{
    for (unsigned i = 0; i < SP_GRAVEYARD; i++)
        if (sp_rp.graveyard[i] == base && base)
            return 1;
    return 0;
}

/* The bases that owe the program one successful unregister: an open-
 * addressing table (linear probing, deletion by shifting back), in .bss,
 * touched only by programs that free registered memory. Up to 3/4 full:
 * past that, a new base owes nothing (its unregister gets "not
 * registered"). Lock held for all three. */
#define SP_OWED_CAP 4096u
static uintptr_t owed_tab[SP_OWED_CAP];
static unsigned owed_n;

static unsigned owed_home(uintptr_t base)
{
    return (unsigned)(((uint64_t)base * 0x9E3779B97F4A7C15ull) >> 52) & (SP_OWED_CAP - 1);
}

void sp_reaper_owe(uintptr_t base)
{
    if (!base || owed_n >= SP_OWED_CAP / 4 * 3)
        return;
    unsigned i = owed_home(base);
    while (owed_tab[i] && owed_tab[i] != base)
        i = (i + 1) & (SP_OWED_CAP - 1);
    if (!owed_tab[i]) {
        owed_tab[i] = base;
        owed_n++;
    }
}

int sp_reaper_take_owed(uintptr_t base)
{
    if (!base || !owed_n)
        return 0;
    unsigned i = owed_home(base);
    while (owed_tab[i] && owed_tab[i] != base)
        i = (i + 1) & (SP_OWED_CAP - 1);
    if (!owed_tab[i])
        return 0;
    /* Delete, then move back each later entry of the run that its home
     * allows, so that no probe stops early. */
    owed_tab[i] = 0;
    owed_n--;
    for (unsigned j = (i + 1) & (SP_OWED_CAP - 1); owed_tab[j]; j = (j + 1) & (SP_OWED_CAP - 1)) {
        unsigned h = owed_home(owed_tab[j]);
        /* Is h cyclically outside (i, j]? Then the entry may move to i. */
        if ((j > i && (h <= i || h > j)) || (j < i && h <= i && h > j)) {
            owed_tab[i] = owed_tab[j];
            owed_tab[j] = 0;
            i = j;
        }
    }
    return 1;
}
