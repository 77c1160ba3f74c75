/*
 * stack.c - the stack walk behind a site's capture (stack.h).
 *
 * For a return address ra, the rule is what libgcc's unwinder would derive
 * from the CFI of the function holding ra - 1, executed up to ra: the
 * canonical frame address (CFA: the caller's stack pointer) as %rsp or
 * %rbp plus an offset, the return address saved at CFA + ra_off, and %rbp
 * either unchanged or saved at CFA + rbp_off. Only rules of that shape are
 * replayed; any other (a DWARF expression, a register kept in another
 * register, a signal frame) is remembered as "use the unwinder", so the
 * stacks are those of backtrace() whatever the code.
 *
 * The rules live in a fixed table of pointers to entries from a static
 * pool: an entry is written once and then published by a compare-and-swap
 * of an empty slot, so readers take no lock. sp_stack_forget empties the
 * slots (entries are never reused: a reader may still hold one).
 */
#include "stack.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && defined(__linux__)

/* libgcc's lookup: the FDE covering pc, and its function's start. */
struct sp_eh_bases {
    void *tbase;
    void *dbase;
    void *func;
};
typedef const void *(*find_fde_fn)(void *pc, struct sp_eh_bases *bases);
static find_fde_fn find_fde; /* atomic: set once by sp_stack_init */

enum { RULE_STEP = 1, RULE_END, RULE_UNWINDER };

typedef struct rule {
    uintptr_t pc;     /* the return address it is for */
    int32_t cfa_off;  /* CFA = (cfa_rbp ? %rbp : %rsp) + cfa_off */
    int16_t ra_off;   /* return address at CFA + ra_off */
    int16_t rbp_off;  /* caller's %rbp at CFA + rbp_off; 0: %rbp unchanged */
    uint8_t cfa_rbp;
    uint8_t kind;     /* RULE_* */
} rule;

#define SLOT_BITS 13
#define SLOTS (1u << SLOT_BITS)
#define POOL 6144
#define PROBES 8
#define MAX_FRAME ((uintptr_t)64 << 20) /* a larger frame: the unwinder decides */

static rule *slot[SLOTS];   /* atomic: NULL or a published entry */
static rule pool[POOL];
static unsigned pool_used;  /* atomic */

static inline unsigned slot_of(uintptr_t pc)
{
    return (unsigned)((pc * 0x9E3779B97F4A7C15ull) >> (64 - SLOT_BITS));
}

static const rule *lookup(uintptr_t pc)
{
    unsigned h = slot_of(pc);
    for (unsigned i = 0; i < PROBES; i++) {
        const rule *r = __atomic_load_n(&slot[(h + i) & (SLOTS - 1)], __ATOMIC_ACQUIRE);
        if (!r)
            return NULL;
        if (r->pc == pc)
            return r;
    }
    return NULL;
}

/* Publishes a copy of *r; when the pool or the probes run out, nothing is
 * kept (the next walk derives the rule again). */
static void keep(const rule *r)
{
    unsigned k = __atomic_fetch_add(&pool_used, 1, __ATOMIC_RELAXED);
    if (k >= POOL)
        return;
    pool[k] = *r;
    unsigned h = slot_of(r->pc);
    for (unsigned i = 0; i < PROBES; i++) {
        rule **s = &slot[(h + i) & (SLOTS - 1)];
        rule *cur = NULL;
        if (__atomic_compare_exchange_n(s, &cur, &pool[k], 0, __ATOMIC_RELEASE, __ATOMIC_ACQUIRE))
            return;
        if (cur->pc == r->pc)
            return; /* another thread kept it first */
    }
}

/* ---- reading the CFI ------------------------------------------------------ */

typedef struct cursor {
    const uint8_t *p, *end;
    int bad;
} cursor;

static uint64_t u8(cursor *c)
{
    if (c->p >= c->end) {
        c->bad = 1;
        return 0;
    }
    return *c->p++;
}

static uint64_t fixed(cursor *c, int n)
{
    if (c->end - c->p < n) {
        c->bad = 1;
        return 0;
    }
    uint64_t v = 0;
    memcpy(&v, c->p, (size_t)n); /* little-endian */
    c->p += n;
    return v;
}

static uint64_t uleb(cursor *c)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        uint64_t b = u8(c);
        v |= (b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
    c->bad = 1;
    return 0;
}

static int64_t sleb(cursor *c)
{
    uint64_t v = 0;
    int shift = 0;
    uint64_t b;
    do {
        if (shift >= 64) {
            c->bad = 1;
            return 0;
        }
        b = u8(c);
        v |= (b & 0x7f) << shift;
        shift += 7;
    } while (b & 0x80);
    if (shift < 64 && (b & 0x40))
        v |= ~(uint64_t)0 << shift;
    return (int64_t)v;
}

/* Skips one value of pointer encoding enc (DW_EH_PE_*): its format only. */
static void skip_encoded(cursor *c, unsigned enc)
{
    switch (enc & 0x0f) {
    case 0x00: /* absptr */
    case 0x04: /* udata8 */
    case 0x0c: /* sdata8 */
        fixed(c, 8);
        break;
    case 0x02: /* udata2 */
    case 0x0a: /* sdata2 */
        fixed(c, 2);
        break;
    case 0x03: /* udata4 */
    case 0x0b: /* sdata4 */
        fixed(c, 4);
        break;
    case 0x01: /* uleb128 */
    case 0x09: /* sleb128 */
        uleb(c);
        break;
    default:
        c->bad = 1;
    }
}

/* What a register's rule is, as far as the walk cares. */
enum { REG_UNSAVED = 0, REG_OFFSET, REG_UNDEF, REG_OTHER };

typedef struct cfa_state {
    int cfa_reg;      /* DWARF register, or -1: a DWARF expression */
    int64_t cfa_off;
    int rbp_how, ra_how, rsp_how;
    int64_t rbp_off, ra_off;
} cfa_state;

#define DW_RBP 6
#define DW_RSP 7
#define DW_RA 16
#define STATE_STACK 8

static void set_reg(cfa_state *s, uint64_t reg, int how, int64_t off)
{
    if (reg == DW_RBP) {
        s->rbp_how = how;
        s->rbp_off = off;
    } else if (reg == DW_RA) {
        s->ra_how = how;
        s->ra_off = off;
    } else if (reg == DW_RSP) {
        s->rsp_how = how; /* anything but "the CFA" is left to the unwinder */
    }
}

/* Executes CFA instructions [c) while loc < until, as libgcc's
 * execute_cfa_program does. 0 on success. */
static int run_cfa(cursor *c, uintptr_t loc, uintptr_t until, uint64_t code_align,
                   int64_t data_align, cfa_state *s)
{
    cfa_state saved[STATE_STACK];
    int depth = 0;
    while (c->p < c->end && loc < until && !c->bad) {
        unsigned op = (unsigned)u8(c);
        uint64_t reg;
        switch (op & 0xc0) {
        case 0x40: /* DW_CFA_advance_loc */
            loc += (op & 0x3f) * code_align;
            continue;
        case 0x80: /* DW_CFA_offset */
            set_reg(s, op & 0x3f, REG_OFFSET, (int64_t)uleb(c) * data_align);
            continue;
        case 0xc0: /* DW_CFA_restore: libgcc makes it "unsaved" */
            set_reg(s, op & 0x3f, REG_UNSAVED, 0);
            continue;
        }
        switch (op) {
        case 0x00: /* nop */
            break;
        case 0x02: /* advance_loc1 */
            loc += fixed(c, 1) * code_align;
            break;
        case 0x03: /* advance_loc2 */
            loc += fixed(c, 2) * code_align;
            break;
        case 0x04: /* advance_loc4 */
            loc += fixed(c, 4) * code_align;
            break;
        case 0x05: /* offset_extended */
            reg = uleb(c);
            set_reg(s, reg, REG_OFFSET, (int64_t)uleb(c) * data_align);
            break;
        case 0x06: /* restore_extended */
        case 0x08: /* same_value */
            set_reg(s, uleb(c), REG_UNSAVED, 0);
            break;
        case 0x07: /* undefined */
            set_reg(s, uleb(c), REG_UNDEF, 0);
            break;
        case 0x09: /* register */
            reg = uleb(c);
            uleb(c);
            set_reg(s, reg, REG_OTHER, 0);
            break;
        case 0x0a: /* remember_state */
            if (depth == STATE_STACK)
                return -1;
            saved[depth++] = *s;
            break;
        case 0x0b: /* restore_state */
            if (depth == 0)
                return -1;
            *s = saved[--depth];
            break;
        case 0x0c: /* def_cfa */
            s->cfa_reg = (int)uleb(c);
            s->cfa_off = (int64_t)uleb(c);
            break;
        case 0x0d: /* def_cfa_register */
            s->cfa_reg = (int)uleb(c);
            break;
        case 0x0e: /* def_cfa_offset */
            s->cfa_off = (int64_t)uleb(c);
            break;
        case 0x0f: { /* def_cfa_expression */
            uint64_t n = uleb(c);
            if ((uint64_t)(c->end - c->p) < n)
                return -1;
            c->p += n;
            s->cfa_reg = -1;
            break;
        }
        case 0x10:   /* expression */
        case 0x16: { /* val_expression */
            reg = uleb(c);
            uint64_t n = uleb(c);
            if ((uint64_t)(c->end - c->p) < n)
                return -1;
            c->p += n;
            set_reg(s, reg, REG_OTHER, 0);
            break;
        }
        case 0x11: /* offset_extended_sf */
            reg = uleb(c);
            set_reg(s, reg, REG_OFFSET, sleb(c) * data_align);
            break;
        case 0x12: /* def_cfa_sf */
            s->cfa_reg = (int)uleb(c);
            s->cfa_off = sleb(c) * data_align;
            break;
        case 0x13: /* def_cfa_offset_sf */
            s->cfa_off = sleb(c) * data_align;
            break;
        case 0x14: /* val_offset */
            reg = uleb(c);
            uleb(c);
            set_reg(s, reg, REG_OTHER, 0);
            break;
        case 0x15: /* val_offset_sf */
            reg = uleb(c);
            sleb(c);
            set_reg(s, reg, REG_OTHER, 0);
            break;
        case 0x2e: /* GNU_args_size */
            uleb(c);
            break;
        case 0x2f: /* GNU_negative_offset_extended */
            reg = uleb(c);
            set_reg(s, reg, REG_OFFSET, -(int64_t)uleb(c) * data_align);
            break;
        default: /* set_loc and anything else: the unwinder knows better */
            return -1;
        }
    }
    return c->bad ? -1 : 0;
}

/* The rule for return address ra, from its FDE; r->kind says whether the
 * walk may replay it. */
static void derive(uintptr_t ra, rule *r)
{
    memset(r, 0, sizeof(*r));
    r->pc = ra;
    r->kind = RULE_UNWINDER;
    find_fde_fn find = __atomic_load_n(&find_fde, __ATOMIC_ACQUIRE);
    struct sp_eh_bases bases = { 0 };
    const uint8_t *fde = find ? find((void *)(ra - 1), &bases) : NULL;
    if (!fde || !bases.func)
        return;

    /* The FDE: length, CIE pointer, pc_begin, pc_range, augmentation, insns. */
    uint32_t len;
    memcpy(&len, fde, 4);
    if (len == 0 || len == 0xffffffffu)
        return;
    cursor f = { fde + 4, fde + 4 + len, 0 };
    uint32_t cie_ptr = (uint32_t)fixed(&f, 4);
    if (cie_ptr == 0)
        return;
    const uint8_t *cie = fde + 4 - cie_ptr;

    /* Its CIE. */
    uint32_t clen, cid;
    memcpy(&clen, cie, 4);
    memcpy(&cid, cie + 4, 4);
    if (clen == 0 || clen == 0xffffffffu || cid != 0)
        return;
    cursor c = { cie + 8, cie + 4 + clen, 0 };
    unsigned version = (unsigned)u8(&c);
    if (version != 1 && version != 3)
        return;
    const char *aug = (const char *)c.p;
    size_t alen = strnlen(aug, (size_t)(c.end - c.p));
    if (alen == (size_t)(c.end - c.p))
        return;
    c.p += alen + 1;
    uint64_t code_align = uleb(&c);
    int64_t data_align = sleb(&c);
    uint64_t ra_col = version == 1 ? u8(&c) : uleb(&c);
    unsigned fde_enc = 0x00;
    int has_z = aug[0] == 'z';
    if (has_z) {
        uint64_t n = uleb(&c);
        if (c.bad || (uint64_t)(c.end - c.p) < n)
            return;
        cursor a = { c.p, c.p + n, 0 };
        c.p += n;
        for (const char *k = aug + 1; *k; k++) {
            if (*k == 'R') {
                fde_enc = (unsigned)u8(&a);
            } else if (*k == 'P') {
                unsigned penc = (unsigned)u8(&a);
                skip_encoded(&a, penc);
            } else if (*k == 'L') {
                u8(&a);
            } else {
                return; /* 'S' (a signal frame) and anything unknown */
            }
        }
        if (a.bad)
            return;
    } else if (aug[0]) {
        return;
    }
    if (c.bad || ra_col != DW_RA || fde_enc == 0xff)
        return;

    cfa_state s = { .cfa_reg = -1 };
    if (run_cfa(&c, 0, UINTPTR_MAX, code_align, data_align, &s) != 0)
        return;

    skip_encoded(&f, fde_enc); /* pc_begin: bases.func says it */
    skip_encoded(&f, fde_enc); /* pc_range */
    if (has_z) {
        uint64_t n = uleb(&f);
        if (f.bad || (uint64_t)(f.end - f.p) < n)
            return;
        f.p += n;
    }
    if (f.bad || run_cfa(&f, (uintptr_t)bases.func, ra, code_align, data_align, &s) != 0)
        return;

    if (s.ra_how == REG_UNDEF) {
        r->kind = RULE_END; /* the outermost frame (_start, a thread's start) */
        return;
    }
    if ((s.cfa_reg != DW_RSP && s.cfa_reg != DW_RBP) || s.cfa_off <= 0 ||
        s.cfa_off > (int64_t)MAX_FRAME || s.ra_how != REG_OFFSET || s.ra_off >= 0 ||
        s.ra_off < INT16_MIN || s.rsp_how != REG_UNSAVED || (s.rbp_how != REG_UNSAVED && s.rbp_how != REG_OFFSET) ||
        (s.rbp_how == REG_OFFSET && (s.rbp_off >= 0 || s.rbp_off < INT16_MIN)))
        return;
    r->cfa_rbp = s.cfa_reg == DW_RBP;
    r->cfa_off = (int32_t)s.cfa_off;
    r->ra_off = (int16_t)s.ra_off;
    r->rbp_off = s.rbp_how == REG_OFFSET ? (int16_t)s.rbp_off : 0;
    r->kind = RULE_STEP;
}

void sp_stack_init(void)
{
    if (__atomic_load_n(&find_fde, __ATOMIC_ACQUIRE))
        return;
    /* The unwinder backtrace() has loaded (sp_diag_init warms it up). */
    void *h = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_NOLOAD);
    void *fn = h ? dlsym(h, "_Unwind_Find_FDE") : NULL;
    if (!fn)
        fn = dlsym(RTLD_DEFAULT, "_Unwind_Find_FDE");
    (void)dlerror(); /* the program's dlerror() answers for its own calls only */
    if (fn)
        __atomic_store_n(&find_fde, (find_fde_fn)fn, __ATOMIC_RELEASE);
    /* h stays open: libgcc is never unloaded under a walk. */
}

void sp_stack_forget(void)
{
    for (unsigned i = 0; i < SLOTS; i++)
        __atomic_store_n(&slot[i], NULL, __ATOMIC_RELEASE);
}

/* It reads the stack's saved slots, never a sanitizer's redzone; the
 * sanitizers need not watch it. */
__attribute__((noinline, no_sanitize_address)) int sp_stack_walk(void **pc, int max)
{
    if (max <= 0)
        return 0;
    if (!__atomic_load_n(&find_fde, __ATOMIC_RELAXED))
        return -1;
    /* This function keeps a frame pointer (it asks for its frame): its
     * frame holds the caller's %rbp and the return address into the caller,
     * and the caller's %rsp is just above them. */
    uintptr_t *fp = __builtin_frame_address(0);
    uintptr_t rbp = fp[0], ip = fp[1], rsp = (uintptr_t)(fp + 2);
    int n = 0;
    for (;;) {
        pc[n++] = (void *)ip;
        if (n == max)
            break;
        const rule *r = lookup(ip);
        rule fresh;
        if (!r) {
            derive(ip, &fresh);
            keep(&fresh);
            r = &fresh;
        }
        if (r->kind == RULE_END)
            break;
        if (r->kind != RULE_STEP)
            return -1;
        uintptr_t cfa = (r->cfa_rbp ? rbp : rsp) + (uintptr_t)(intptr_t)r->cfa_off;
        /* The caller's frame lies above this one, 8-aligned, not far. */
        if (cfa <= rsp || (cfa & 7) || cfa - rsp > MAX_FRAME)
            return -1;
        uintptr_t at = cfa + (uintptr_t)(intptr_t)r->ra_off;
        if (at < rsp)
            return -1;
        ip = *(const uintptr_t *)at;
        if (r->rbp_off) {
            at = cfa + (uintptr_t)(intptr_t)r->rbp_off;
            if (at < rsp)
                return -1;
            rbp = *(const uintptr_t *)at;
        }
        rsp = cfa;
        if (ip == 0)
            break; /* libgcc ends there too; backtrace() drops that NULL */
    }
    return n;
}

#else /* not x86-64 Linux: always the unwinder */

void sp_stack_init(void) {}
void sp_stack_forget(void) {}
int sp_stack_walk(void **pc, int max)
{
    (void)pc;
    (void)max;
    return -1;
}

#endif
