/*
 * face.h - what the process layer (interpose/) needs of a runtime's face,
 * and how a face offers it without interpose/ naming the face.
 *
 * How it works: each face (hip/, cuda/, a test's toy runtime) fills one
 * sp_face and registers it with SP_FACE(var), which puts a pointer to it in
 * the linker section "safepin_faces". The linker gathers the pointers of every
 * object linked into one array, bounded by __start_safepin_faces and
 * __stop_safepin_faces; interpose/ walks that array (faces.c), lowest order
 * first, as compiler-rt's tools supply their hooks to the common layer and
 * UCX's memory types register theirs with ucm. interpose/ takes no symbol
 * from a face (tests/layout checks it).
 *
 * How to add one: fill an sp_face in the face's folder, SP_FACE() it, and
 * link the object with the library. Every callback is optional (NULL).
 */
#ifndef SAFEPIN_INTERPOSE_FACE_H
#define SAFEPIN_INTERPOSE_FACE_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sp_face {
    const char *name; /* for logs: "HIP", "CUDA" */
    /* Start order, lowest first: the face's runtime slot (runtime.h).
     * Faces start in this order; no two share it. */
    int order;
    /* Every name the face hands out a shim for starts with this prefix
     * ("hip", "cu"): dlvsym turns other names away before any call. */
    const char *prefix;
    /* At sp_init, in order, after libc's functions are resolved: registers
     * the face's table with the core (sp_rt_register). */
    void (*init)(void);
    /* The face's exported shim for name (any form it hooks), or NULL. */
    void *(*shim_for)(const char *name);
    /* The program's dlsym(handle, name) answered p (not NULL, handle not
     * RTLD_DEFAULT): the shim to hand out instead, or NULL for p itself.
     * May complete the face's table of real functions from handle. */
    void *(*dlsym)(void *handle, const char *name, void *p);
    /* The program's dlvsym(handle, name, version) answered p, the
     * runtime's default definition of name: the shim, or NULL. No lock,
     * no runtime call (dlvsym runs before the runtime initializes). */
    void *(*dlvsym)(void *handle, const char *name, void *p);
    /* Before and after each dlclose of the program's: forget what may
     * lie in an object that is unloaded. */
    void (*forget)(void);
    /* The program's dlclose(handle): 1 if handle is a library the face
     * keeps loaded for the rest of the process (the program's reference
     * is then dropped as it asked, and nothing else is done). */
    int (*keep_loaded)(void *handle);
    /* A runtime library the face calls through a table of its own, which
     * the program may dlclose and load again (HIP's). The process layer
     * follows it (dlclose.c): while the core has work (sp_reaper_busy) it
     * keeps the library loaded; once it is unloaded it has the table
     * forgotten and filled again from the next instance.
     * lib_fn: one function of the table, naming the instance, or NULL
     * while the table holds none (no lock needed). lib_forget: that
     * instance was unloaded: empty the table, or, given next (a dlopen
     * handle of the instance the program loaded since), set each entry to
     * next's, never leaving one empty between (the shims read the table
     * without the lock). lib_fill: fill the table's
     * empty entries from a dlopen handle. Both without safepin's lock
     * (they look names up: the loader's lock, which a library's
     * constructor holds while it may wait for safepin's). */
    void *(*lib_fn)(void);
    void (*lib_forget)(void *next);
    void (*lib_fill)(void *handle);
    /* 1 once the face has its runtime's register function: the process
     * has a runtime to protect (its exit report, the free-not-hooked
     * warning). A library that merely exports some of the runtime's other
     * names (a stub, a mock) is none. No lock. */
    int (*has_runtime)(void);
} sp_face;

/* Registers face (a static const sp_face) with the process layer. */
#define SP_FACE(face)                                                          \
    __attribute__((section("safepin_faces"), used)) static const sp_face *const sp_face_ptr_##face = &(face)

/* The faces linked in, lowest order first: at most max in out; returns
 * how many (faces.c). No lock, no allocation, no libc call. */
#define SP_FACES_MAX 8
int sp_faces(const sp_face **out, int max);
/* 1 if a face has its runtime (has_runtime): the process has a runtime
 * to protect. */
int sp_faces_have_runtime(void);

/* The process layer's logic that walks the faces, for a face's tests to
 * drive it without LD_PRELOAD: the program's dlsym (reach.c; caller: the
 * return address of its call, or NULL) and dlclose (dlclose.c). */
void *sp_dlsym(void *handle, const char *name, void *caller);
int sp_dlclose(void *handle);

/* Before a look-up on a handle completes face's table (lib_fill): if the
 * library its lib_fn lies in is no longer loaded, forget it now (the
 * reaper's dlclose may have unloaded it a moment ago). Takes the lock. */
void sp_face_lib_check(const sp_face *face);

#ifdef __cplusplus
}
#endif
#endif
