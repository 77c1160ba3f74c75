/*
 * elf_lookup.c - a symbol looked up in a loaded object's own dynamic
 * symbol table: DT_GNU_HASH (or DT_HASH) to find the name, DT_VERSYM and
 * DT_VERDEF to check its version.
 *
 * Why not dlvsym: safepin exports dlvsym (and dlsym). Its own reference to
 * dlvsym@GLIBC_2.34 would bind to that export (an unversioned definition in
 * the preload satisfies a versioned reference), so glibc's functions are
 * read from libc's table here instead. The same reading answers, for the
 * dlvsym hook, which object defines a name at a version, without calling
 * into the dynamic linker's look-up (whose answer depends on the caller).
 *
 * Runs on first use of dlsym, possibly while a sanitizer runtime
 * initializes: no allocation, no instrumentation, no logging.
 */
#include "elf_lookup.h"

#include <elf.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>

#define SP_RAW __attribute__((no_sanitize_address, no_sanitize("thread")))
/* st_info's halves: the same in 32- and 64-bit objects. */
#define SP_ST_BIND(info) ((info) >> 4)
#define SP_ST_TYPE(info) ((info) & 0xf)

/* The tables of one loaded object. */
typedef struct elf_obj {
    uintptr_t base;                /* load bias */
    const ElfW(Sym) *symtab;
    const char *strtab;
    const uint32_t *gnu_hash;      /* DT_GNU_HASH, or NULL */
    const ElfW(Word) *sysv_hash;   /* DT_HASH, or NULL */
    const ElfW(Half) *versym;      /* NULL: the object has no versions */
    const ElfW(Verdef) *verdef;
    const char *soname;
} elf_obj;

/* An address from the dynamic section. ld.so relocates most of them in
 * place (DT_STRTAB, DT_SYMTAB, the hashes, DT_VERSYM) but not all
 * (DT_VERDEF), and none on targets with a read-only dynamic section; an
 * unrelocated one is an offset, smaller than the load bias. */
SP_RAW static const void *dyn_ptr(uintptr_t base, ElfW(Addr) p)
{
    return (const void *)(p < base ? base + p : p);
}

/* Names compared without strcmp: glibc's functions are looked up while a
 * sanitizer runtime may still be initializing, before its interceptors
 * (strcmp, memset, dl_iterate_phdr) work. */
SP_RAW static int same_str(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}

/* Fill o from the object's dynamic section; 0 if it has no usable table. */
SP_RAW static int read_obj(uintptr_t base, const ElfW(Dyn) *dyn, elf_obj *o)
{
    o->base = base;
    o->symtab = NULL;
    o->strtab = NULL;
    o->gnu_hash = NULL;
    o->sysv_hash = NULL;
    o->versym = NULL;
    o->verdef = NULL;
    o->soname = "";
    if (!dyn)
        return 0;
    ElfW(Xword) soname = 0;
    int has_soname = 0;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        const void *p = dyn_ptr(o->base, dyn->d_un.d_ptr);
        switch (dyn->d_tag) {
        case DT_SYMTAB: o->symtab = p; break;
        case DT_STRTAB: o->strtab = p; break;
        case DT_GNU_HASH: o->gnu_hash = p; break;
        case DT_HASH: o->sysv_hash = p; break;
        case DT_VERSYM: o->versym = p; break;
        case DT_VERDEF: o->verdef = p; break;
        case DT_SONAME: soname = dyn->d_un.d_val; has_soname = 1; break;
        default: break;
        }
    }
    if (!o->symtab || !o->strtab || (!o->gnu_hash && !o->sysv_hash))
        return 0;
    o->soname = has_soname ? o->strtab + soname : "";
    return 1;
}

/* The same, from dl_iterate_phdr's description of the object. */
SP_RAW static int read_info(const struct dl_phdr_info *info, elf_obj *o)
{
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    return read_obj(info->dlpi_addr, dyn, o);
}

/* The name of version index ndx (DT_VERDEF), or NULL. */
SP_RAW static const char *version_name(const elf_obj *o, unsigned ndx)
{
    const ElfW(Verdef) *vd = o->verdef;
    while (vd) {
        if (vd->vd_ndx == ndx && !(vd->vd_flags & VER_FLG_BASE)) {
            const ElfW(Verdaux) *aux = (const void *)((const char *)vd + vd->vd_aux);
            return o->strtab + aux->vda_name;
        }
        vd = vd->vd_next ? (const void *)((const char *)vd + vd->vd_next) : NULL;
    }
    return NULL;
}

/* How a definition's version is matched. */
enum vmode {
    V_DEFAULT, /* version NULL: the default definition (no hidden bit) */
    V_EXACT,   /* exactly this version (glibc's own functions) */
    V_DLVSYM   /* dlvsym's rule: exactly this version, or any in an object without versions */
};

/* Does symbol i of o define name at version (per mode)? */
SP_RAW static int matches(const elf_obj *o, uint32_t i, const char *name, const char *version,
                          enum vmode mode)
{
    const ElfW(Sym) *s = &o->symtab[i];
    if (s->st_shndx == SHN_UNDEF || s->st_value == 0 ||
        (SP_ST_BIND(s->st_info) != STB_GLOBAL && SP_ST_BIND(s->st_info) != STB_WEAK) ||
        !same_str(o->strtab + s->st_name, name))
        return 0;
    if (!o->versym)
        return mode != V_EXACT;
    ElfW(Half) v = o->versym[i];
    if (mode == V_DEFAULT)
        return !(v & 0x8000);
    const char *vn = (v & 0x7fff) >= 2 ? version_name(o, v & 0x7fff) : NULL;
    return vn && same_str(vn, version);
}

SP_RAW static uint32_t gnu_hash(const char *s)
{
    uint32_t h = 5381;
    for (; *s; s++)
        h = h * 33 + (unsigned char)*s;
    return h;
}

SP_RAW static unsigned long sysv_hash(const char *s)
{
    unsigned long h = 0, g;
    for (; *s; s++) {
        h = (h << 4) + (unsigned char)*s;
        g = h & 0xf0000000;
        if (g)
            h ^= g >> 24;
        h &= ~g;
    }
    return h;
}

/* The symbol of o that matches, or NULL. Every version of a name sits in
 * the same hash chain, so the chain is walked to its end. */
SP_RAW static const ElfW(Sym) *find(const elf_obj *o, const char *name, const char *version,
                                    enum vmode mode)
{
    if (o->gnu_hash) {
        const uint32_t *gh = o->gnu_hash;
        uint32_t nbuckets = gh[0], symoffset = gh[1], bloom_words = gh[2];
        const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)(gh + 4) + bloom_words);
        const uint32_t *chain = buckets + nbuckets;
        uint32_t h = gnu_hash(name);
        if (!nbuckets)
            return NULL;
        uint32_t i = buckets[h % nbuckets];
        if (i < symoffset)
            return NULL;
        for (;; i++) {
            uint32_t c = chain[i - symoffset];
            if ((c | 1) == (h | 1) && matches(o, i, name, version, mode))
                return &o->symtab[i];
            if (c & 1)
                return NULL;
        }
    }
    const ElfW(Word) *hs = o->sysv_hash;
    ElfW(Word) nbucket = hs[0];
    const ElfW(Word) *bucket = hs + 2, *chain = bucket + nbucket;
    if (!nbucket)
        return NULL;
    for (ElfW(Word) i = bucket[sysv_hash(name) % nbucket]; i != STN_UNDEF; i = chain[i])
        if (matches(o, i, name, version, mode))
            return &o->symtab[i];
    return NULL;
}

/* The address of a found symbol; NULL for an IFUNC (its resolver). */
SP_RAW static void *addr_of(const elf_obj *o, const ElfW(Sym) *s)
{
    if (!s || SP_ST_TYPE(s->st_info) == STT_GNU_IFUNC)
        return NULL;
    return (void *)(o->base + s->st_value);
}

SP_RAW static int contains(const struct dl_phdr_info *info, const void *addr)
{
    uintptr_t a = (uintptr_t)addr;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && a >= lo && a < lo + ph->p_memsz)
            return 1;
    }
    return 0;
}

/* ---- glibc's own functions ------------------------------------------------ */

/* The dynamic linker's list of loaded objects (_r_debug), walked without
 * dl_iterate_phdr (a sanitizer intercepts it). libc.so.6 (and libdl.so.2)
 * are loaded at start-up: they come before any object dlopen() adds, and
 * no object before them is ever unloaded, so the walk stops on stable
 * entries. */
SP_RAW void *sp_elf_glibc_sym(const char *name, const char *version)
{
    for (struct link_map *lm = _r_debug.r_map; lm; lm = lm->l_next) {
        elf_obj o;
        if (!read_obj(lm->l_addr, lm->l_ld, &o) ||
            (!same_str(o.soname, "libc.so.6") && !same_str(o.soname, "libdl.so.2")))
            continue;
        void *f = addr_of(&o, find(&o, name, version, version ? V_EXACT : V_DEFAULT));
        if (f)
            return f;
    }
    return NULL;
}

/* ---- the object holding an address ---------------------------------------- */

typedef struct at_ctx {
    const void *addr;
    const char *name, *version;
    void *found;
} at_ctx;

SP_RAW static int at_one(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    at_ctx *c = arg;
    elf_obj o;
    if (!contains(info, c->addr))
        return 0;
    if (read_info(info, &o))
        c->found = addr_of(&o, find(&o, c->name, c->version, c->version ? V_EXACT : V_DEFAULT));
    return 1;
}

SP_RAW void *sp_elf_sym_at(const void *addr, const char *name, const char *version)
{
    at_ctx c = {addr, name, version, NULL};
    dl_iterate_phdr(at_one, &c);
    return c.found;
}

/* ---- RTLD_NEXT -------------------------------------------------------------- */

SP_RAW static int count_one(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)info;
    (void)size;
    ++*(int *)arg;
    return 0;
}

int sp_elf_count_objects(void)
{
    int n = 0;
    dl_iterate_phdr(count_one, &n);
    return n;
}

typedef struct next_ctx {
    const void *caller, *skip;
    const char *name, *version;
    int left;  /* objects that may still hold the caller */
    int after; /* the caller's object has been passed */
    void *found;
} next_ctx;

SP_RAW static int next_one(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    next_ctx *c = arg;
    if (!c->after) {
        c->after = contains(info, c->caller);
        return !c->after && --c->left <= 0; /* not among the start-up objects: stop */
    }
    elf_obj o;
    if (contains(info, c->skip) || !read_info(info, &o))
        return 0;
    const ElfW(Sym) *s = find(&o, c->name, c->version, V_DLVSYM);
    if (!s)
        return 0;
    c->found = addr_of(&o, s);
    return 1; /* the first definition decides, even an IFUNC (found stays NULL) */
}

SP_RAW void *sp_elf_next_sym(const void *caller, int startup, const void *skip, const char *name,
                             const char *version)
{
    next_ctx c = {caller, skip, name, version, startup, 0, NULL};
    if (startup > 0)
        dl_iterate_phdr(next_one, &c);
    return c.found;
}
