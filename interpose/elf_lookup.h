/*
 * elf_lookup.h - symbols read straight from the dynamic symbol tables of
 * the loaded objects, without dlsym or dlvsym (elf_lookup.c).
 *
 * safepin exports dlsym and dlvsym; a call of its own to either, by name,
 * would bind to its own export. These find glibc's, and answer the few
 * questions the dlvsym hook asks about other objects, without calling them.
 * Nothing here allocates, locks (beyond dl_iterate_phdr's own lock) or logs.
 *
 * Dependencies: none. Callers: interpose/real.c, interpose/dlvsym.c.
 */
#ifndef SAFEPIN_ELF_LOOKUP_H
#define SAFEPIN_ELF_LOOKUP_H

#ifdef __cplusplus
extern "C" {
#endif

/* glibc's own name@version: its definition in libc.so.6 (or in libdl.so.2,
 * where dlsym lived before glibc 2.34), or NULL. version NULL: the default
 * definition (name@@...), whatever its version. */
void *sp_elf_glibc_sym(const char *name, const char *version);

/* The definition of name in the loaded object that contains addr: the one
 * of version, or the default one (version NULL). NULL when there is none,
 * or when it is an IFUNC (its address is not the function's). */
void *sp_elf_sym_at(const void *addr, const char *name, const char *version);

/* The number of objects loaded now (dl_iterate_phdr's count). */
int sp_elf_count_objects(void);

/* dlvsym(RTLD_NEXT, name, version) as seen from the object that contains
 * caller, when that object is one of the first `startup` objects in load
 * order (loaded at start-up: glibc searches the global scope after it):
 * the definition in the first object after it that has one (glibc's rule
 * for a versioned look-up: the exact version, or any definition in an
 * object without versions). Objects containing skip are passed over. NULL
 * if none, or if caller is in no such object. */
void *sp_elf_next_sym(const void *caller, int startup, const void *skip, const char *name,
                      const char *version);

#ifdef __cplusplus
}
#endif
#endif
