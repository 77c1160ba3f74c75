/*
 * dlvsym.c - dlvsym hands out safepin's shims, as dlsym does (reach.c).
 *
 * A versioned look-up never takes safepin's unversioned definitions:
 * dlvsym(handle, "hipHostRegister", "hip_4.2"), and the same on
 * RTLD_DEFAULT or RTLD_NEXT or for a CUDA driver name, would return the
 * runtime's own function, and a registration made through it would be
 * unprotected. So safepin exports dlvsym. Its rule:
 *   - glibc's dlvsym answers, with the exact arguments;
 *   - when that answer is a function safepin hooks (the name asked, in
 *     the exact form asked: _v2, _ptsz, ...) and is the runtime's default
 *     definition of that name (the one safepin's shim calls), the program
 *     gets the shim the name's face (face.h) hands out;
 *   - anything else (NULL, dlerror()'s text, an unknown version, another
 *     function, an older version of a hooked one) is glibc's own answer.
 * No version is ever guessed: a version glibc does not know stays NULL.
 *
 * The export (shims.c) asks sp_dlvsym_shim first. When it answers NULL,
 * the export jumps to glibc's dlvsym with the caller's return address
 * untouched, so every answer passed through is made by the program's own
 * call (RTLD_NEXT, RTLD_DEFAULT and dlerror()'s text depend on the caller).
 * Nothing here initializes safepin, takes a lock or calls a driver:
 * look-ups come before hipInit/cuInit, and sanitizer runtimes call dlvsym
 * while they start (their names are turned away before anything runs).
 */
#include "internal.h"

#include "elf_lookup.h"
#include "face.h"

#include <dlfcn.h>

#define SP_RAW __attribute__((no_sanitize_address, no_sanitize("thread")))

typedef void *(*dlvsym_fn)(void *, const char *, const char *);

/* How many objects were loaded at start-up: counted in safepin's
 * constructor, which runs once the program and the libraries it links are
 * all loaded; objects dlopen()ed later come after them in load order. */
static int startup_objects;

__attribute__((constructor)) static void count_startup_objects(void)
{
    __atomic_store_n(&startup_objects, sp_elf_count_objects(), __ATOMIC_RELEASE);
}

/* Could name be hooked? Only names that start with a face's prefix are;
 * checked by hand, without strcmp (a sanitizer runtime's look-ups come here
 * before its interceptors work). */
SP_RAW static int has_prefix(const char *name, const char *prefix)
{
    int i = 0;
    while (prefix[i] && name[i] == prefix[i])
        i++;
    return prefix[i] == 0;
}

SP_RAW static int maybe_hooked(const char *name, const sp_face **faces, int n)
{
    if (!name)
        return 0;
    for (int i = 0; i < n; i++)
        if (faces[i]->prefix && has_prefix(name, faces[i]->prefix))
            return 1;
    return 0;
}

/* Some face hooks name (has a shim for it). */
static int some_face_hooks(const char *name, const sp_face **faces, int n)
{
    for (int i = 0; i < n; i++)
        if (faces[i]->shim_for && faces[i]->shim_for(name))
            return 1;
    return 0;
}

/* The shim of the hooked function p, glibc's answer to a look-up of name;
 * the face's real table completed from it. NULL: not one safepin hooks. */
static void *shim_of(void *handle, const char *name, void *p, const sp_face **faces, int n)
{
    /* The shim calls the runtime's default definition of name: an older
     * version (another function at another address) keeps its own. */
    if (sp_elf_sym_at(p, name, NULL) != p)
        return NULL;
    for (int i = 0; i < n; i++) {
        void *shim = faces[i]->dlvsym ? faces[i]->dlvsym(handle, name, p) : NULL;
        if (shim)
            return shim;
    }
    return NULL;
}

/* The shim for glibc's answer p to dlvsym(handle, name, version), or NULL.
 * Completing the tables looks up names the runtime may lack; dlerror()
 * is then cleared, as glibc's successful dlvsym leaves it. */
static void *shim_for_answer(void *handle, const char *name, void *p, const sp_face **faces, int n)
{
    void *shim = shim_of(handle, name, p, faces, n);
    if (shim)
        (void)dlerror();
    return shim;
}

SP_RAW void *sp_dlvsym_shim(void *handle, const char *name, const char *version, void *caller)
{
    const sp_face *faces[SP_FACES_MAX];
    int n = sp_faces(faces, SP_FACES_MAX);
    if (!maybe_hooked(name, faces, n) || !version)
        return NULL;
    dlvsym_fn real = (dlvsym_fn)sp_glibc_dlvsym();
    if (!real || !some_face_hooks(name, faces, n))
        return NULL;
    void *p = real(handle, name, version);
    if (!p)
        return NULL; /* the program's own call makes the same NULL, and its dlerror() */
    /* glibc answered relative to safepin; for RTLD_NEXT the answer is
     * relative to the caller's object. For an object loaded at start-up
     * (the program, a library it links) glibc searches the global scope
     * after it: when the first object after the caller that defines
     * name@version holds p, p is the caller's answer too. Otherwise (an
     * object dlopen()ed later searches its own dependencies only, say) the
     * caller's own call decides. */
    if (handle == RTLD_NEXT &&
        sp_elf_next_sym(caller, __atomic_load_n(&startup_objects, __ATOMIC_ACQUIRE),
                        (void *)sp_dlvsym_shim, name, version) != p)
        return NULL;
    return shim_for_answer(handle, name, p, faces, n);
}
