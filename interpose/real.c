/*
 * real.c - the table of libc's real functions (sp_real) and its resolver:
 * dlsym(RTLD_NEXT) once, glibc's own dlsym for safepin's and the faces'
 * look-ups, and the loud error when a look-up returns safepin's own shim.
 */
#include "backend.h"
#include "elf_lookup.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

sp_backend sp_real;

static const struct {
    const char *name;
    size_t offset;
} table[] = {
#define SP_REAL(ret, name, params) {#name, offsetof(sp_backend, name)},
#include "slots.inc"
#undef SP_REAL
};

/* glibc's own dlsym. safepin exports a dlsym of its own (shims.c), so its
 * internal lookups call this one: RTLD_NEXT is then relative to safepin.
 * Resolved on first use, possibly while a sanitizer runtime initializes:
 * no instrumentation here. */
__attribute__((visibility("hidden"))) void *sp_dlsym_real_ptr;

/* glibc's name@GLIBC_2.34 (where dlsym, dlvsym and dlclose moved into
 * libc), else name@GLIBC_2.2.5 (libdl.so.2 before), or NULL. Read from
 * libc's own symbol table (runtime/elf_lookup.c): safepin exports dlsym
 * and dlvsym, and a call of its own to either would reach its own. */
__attribute__((visibility("hidden"), no_sanitize_address, no_sanitize("thread")))
void *sp_glibc_versioned(const char *name)
{
    void *f = sp_elf_glibc_sym(name, "GLIBC_2.34");
    return f ? f : sp_elf_glibc_sym(name, "GLIBC_2.2.5");
}

__attribute__((visibility("hidden"), no_sanitize_address, no_sanitize("thread")))
void *sp_glibc_fn(void **slot, const char *name)
{
    void *f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (!f) {
        f = sp_glibc_versioned(name);
        if (!f) /* another architecture's base version: the default one */
            f = sp_elf_glibc_sym(name, NULL);
        __atomic_store_n(slot, f, __ATOMIC_RELEASE);
    }
    return f;
}

/* glibc's dlvsym@GLIBC_2.34 (or @GLIBC_2.2.5): the one the dlvsym hook
 * calls; NULL (and the hook passes everything through) on a glibc that
 * has neither version. pass: what the export passes through to, the same
 * or the default version where the exact one is missing. */
static void *dlvsym_exact, *dlvsym_pass;
static int dlvsym_resolved;

__attribute__((no_sanitize_address, no_sanitize("thread"))) static void resolve_dlvsym(void)
{
    if (__atomic_load_n(&dlvsym_resolved, __ATOMIC_ACQUIRE))
        return;
    void *exact = sp_glibc_versioned("dlvsym");
    __atomic_store_n(&dlvsym_exact, exact, __ATOMIC_RELEASE);
    __atomic_store_n(&dlvsym_pass, exact ? exact : sp_elf_glibc_sym("dlvsym", NULL), __ATOMIC_RELEASE);
    __atomic_store_n(&dlvsym_resolved, 1, __ATOMIC_RELEASE);
}

__attribute__((no_sanitize_address, no_sanitize("thread"))) void *sp_glibc_dlvsym(void)
{
    resolve_dlvsym();
    return __atomic_load_n(&dlvsym_exact, __ATOMIC_ACQUIRE);
}

__attribute__((no_sanitize_address, no_sanitize("thread"))) void *sp_dlvsym_pass(void)
{
    resolve_dlvsym();
    return __atomic_load_n(&dlvsym_pass, __ATOMIC_ACQUIRE);
}

int sp_dlvsym_hooked(void) { return sp_glibc_dlvsym() != NULL; }

__attribute__((visibility("hidden"), no_sanitize_address, no_sanitize("thread")))
dlsym_fn sp_dlsym_resolve_real(void)
{
    return (dlsym_fn)sp_glibc_fn(&sp_dlsym_real_ptr, "dlsym");
}

__attribute__((no_sanitize_address)) dlsym_fn sp_real_dlsym(void) { return sp_dlsym_resolve_real(); }

__attribute__((no_sanitize_address)) void *sp_next_symbol(const char *name)
{
    dlsym_fn f = sp_real_dlsym();
    return f ? f(RTLD_NEXT, name) : NULL;
}

/* safepin's own loaded segments, [lo, hi), found once: a look-up that
 * returns an address in there returned safepin's own shim. */
typedef struct self_span {
    uintptr_t base, lo, hi;
} self_span;

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    self_span *s = arg;
    if (info->dlpi_addr != s->base)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (!s->lo || lo < s->lo)
            s->lo = lo;
        if (hi > s->hi)
            s->hi = hi;
    }
    return 1;
}

static int is_self(const void *p)
{
    static self_span self;
    if (!self.hi) {
        Dl_info me;
        if (!dladdr((void *)&sp_resolve_backend, &me))
            return 0;
        self_span s = {(uintptr_t)me.dli_fbase, 0, 0};
        dl_iterate_phdr(find_self, &s);
        if (!s.hi)
            return 0;
        self = s;
    }
    return (uintptr_t)p >= self.lo && (uintptr_t)p < self.hi;
}

int sp_libc_chunks;

/* free() is glibc's own (not a sanitizer's, not an allocator preloaded
 * after safepin, not glibc's malloc-debug library): its blocks carry
 * glibc's chunk header. */
static void note_libc_chunks(void)
{
    Dl_info fi;
    const char *base;
    if (!sp_real.free || !sp_real.realloc || !dladdr((void *)sp_real.free, &fi) || !fi.dli_fname)
        return;
    base = strrchr(fi.dli_fname, '/');
    base = base ? base + 1 : fi.dli_fname;
    Dl_info ri;
    if (strcmp(base, "libc.so.6") == 0 && dladdr((void *)sp_real.realloc, &ri) &&
        ri.dli_fbase == fi.dli_fbase)
        __atomic_store_n(&sp_libc_chunks, 1, __ATOMIC_RELAXED);
}

void *sp_next_real(const char *name)
{
    void *p = sp_next_symbol(name);
    if (p && is_self(p)) {
        char msg[256];
        int n = snprintf(msg, sizeof(msg),
                         "==%d==safepin: fatal: dlsym(RTLD_NEXT, \"%s\") returned safepin's own "
                         "shim: the library is loaded twice or linked into the program; "
                         "use LD_PRELOAD only\n",
                         (int)getpid(), name);
        if (n > 0)
            (void)!write(2, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
        abort();
    }
    return p;
}

void sp_resolve_backend(void)
{
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        void **slot = (void **)((char *)&sp_real + table[i].offset);
        if (!*slot) /* else already set (tests, or an earlier pass) */
            *slot = sp_next_real(table[i].name);
    }
    note_libc_chunks();
}
