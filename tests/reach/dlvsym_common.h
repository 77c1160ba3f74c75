/*
 * dlvsym_common.h - how the dlvsym reach programs look functions up and say
 * what they got (tests/reach/dlvsym_reach.c for HIP, tests/reach-cuda/
 * dlvsym_lookup.c for the CUDA driver).
 *
 * The way is argv's: "handle" (dlopen RTLD_LOCAL, dlvsym on its handle),
 * "default" (dlopen RTLD_GLOBAL, dlvsym(RTLD_DEFAULT)), "next" (the
 * runtime dlopen()ed RTLD_GLOBAL; libdlvsym_next.so, which the program
 * links, calls dlvsym(RTLD_NEXT): glibc searches the global scope after
 * it), "next-dlopen" (the same from a copy of that library dlopen()ed
 * before the runtime, $DLVSYM_NEXT_LIB: glibc searches only its own
 * dependencies, and finds nothing). Each look-up prints one line:
 *   got NAME@VERSION -> SYMBOL in OBJECT        (dladdr's answer)
 *   got NAME@VERSION -> NULL: DLERROR           (dlerror()'s text)
 * and run.sh compares them, bare and under safepin, from outside.
 */
#ifndef DLVSYM_COMMON_H
#define DLVSYM_COMMON_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* tests/reach/lib/dlvsym_next.c, linked: its dlvsym(RTLD_NEXT, ...). */
void *dlvsym_next(const char *name, const char *version);

static void *dv_handle;                               /* "handle": the runtime's */
static void *(*dv_next)(const char *, const char *); /* "next*": a library's look-up */

/* Load the runtime (and the dlopen()ed RTLD_NEXT library) the way `how`
 * says; 0 if done. */
static int dv_load(const char *how, const char *soname)
{
    int global = strcmp(how, "handle") != 0;
    dv_next = dlvsym_next;
    if (!strcmp(how, "next-dlopen")) {
        const char *path = getenv("DLVSYM_NEXT_LIB");
        void *lib = path ? dlopen(path, RTLD_NOW | RTLD_GLOBAL) : NULL;
        if (!lib)
            return fprintf(stderr, "dlopen %s: %s\n", path ? path : "$DLVSYM_NEXT_LIB", dlerror()), 1;
        dv_next = (void *(*)(const char *, const char *))dlsym(lib, "dlvsym_next");
        if (!dv_next)
            return fprintf(stderr, "no dlvsym_next\n"), 1;
    }
    dv_handle = dlopen(soname, RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL));
    if (!dv_handle)
        return fprintf(stderr, "dlopen %s: %s\n", soname, dlerror()), 1;
    return 0;
}

/* dlvsym the way dv_load chose, and the line that says what came back. */
static void *dv_lookup(const char *how, const char *name, const char *version)
{
    void *fn;
    (void)dlerror();
    if (!strncmp(how, "next", 4))
        fn = dv_next(name, version);
    else
        fn = dlvsym(!strcmp(how, "handle") ? dv_handle : RTLD_DEFAULT, name, version);
    if (!fn) {
        const char *e = dlerror();
        printf("got %s@%s -> NULL: %s\n", name, version, e ? e : "(no dlerror)");
        return NULL;
    }
    Dl_info di;
    const char *obj = "?", *sym = "?";
    if (dladdr(fn, &di)) {
        obj = di.dli_fname && strrchr(di.dli_fname, '/') ? strrchr(di.dli_fname, '/') + 1 : di.dli_fname;
        sym = di.dli_sname && di.dli_saddr == fn ? di.dli_sname : "?";
    }
    const char *e = dlerror(); /* a successful look-up leaves none */
    printf("got %s@%s -> %s in %s%s%s\n", name, version, sym, obj, e ? " dlerror: " : "", e ? e : "");
    return fn;
}

#endif
