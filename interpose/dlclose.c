/*
 * dlclose.c - the program's dlclose: each face forgets what may lie in
 * the object, and the runtime library a face's table lies in is followed
 * through its unload and a reload.
 */
#include "internal.h"
#include "face.h"
#include "stack.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <string.h>
#include <unistd.h>

/* ---- a runtime library's lifetime ----------------------------------------
 *
 * A program may dlclose the runtime it loaded with dlopen, and load it
 * again. A face whose table of real functions lies in such a library says
 * so (face.h, lib_fn). While safepin has work for the runtimes
 * (sp_reaper_busy: ranges, pending releases, deferred calls) it keeps the
 * library loaded with a reference of its own, dropped by the reaper once
 * that work is done. When the library is really unloaded, the face's table
 * is emptied (lib_forget), and filled from the next instance that is
 * loaded (the face's own resolver, or the program's dlsym on its handle):
 * safepin never calls unloaded code.
 *
 * The reaper's dlclose of its reference unloads the library, and only then
 * does the reaper see that and empty the table: meanwhile another thread
 * of the program may already have found it gone, loaded the runtime again
 * and looked its functions up. So a look-up on a handle (dlsym, dlvsym)
 * first checks that the table's functions still lie in a loaded object
 * (sp_face_lib_check), and empties the table itself if not; and each
 * forgetting counts (forgets), so that the reaper's check, made later,
 * empties only the instance it saw, never the next one the table was
 * filled from. Each face's library is followed apart (its index among the
 * faces, which the link fixed).
 */

typedef int (*dlclose_fn)(void *);
static void *real_dlclose_ptr;

static dlclose_fn real_dlclose(void)
{
    return (dlclose_fn)sp_glibc_fn(&real_dlclose_ptr, "dlclose");
}

/* The instance face's table belongs to, or NULL; *fnp: one of its
 * functions. */
static struct link_map *lib_map(const sp_face *face, void **fnp)
{
    void *fn = face->lib_fn ? face->lib_fn() : NULL;
    Dl_info di;
    struct link_map *lm = NULL;
    if (!fn || !dladdr1(fn, &di, (void **)&lm, RTLD_DL_LINKMAP))
        return NULL;
    *fnp = fn;
    return lm;
}

/* What identifies an instance: its face, name, link map and load address. */
typedef struct instance {
    const sp_face *face;
    int slot; /* the face's index (sp_faces) */
    char *name; /* malloc()ed (sp_mem_alloc: a program's small stack has no room for a path) */
    struct link_map *lm;
    uintptr_t addr;
    void *fn; /* a function of it: where to look whether it is still loaded */
    Lmid_t ns; /* its namespace: a runtime dlmopen()ed is found only there */
    unsigned long gen; /* forgets[slot] when the table held it */
    unsigned long long adds, subs; /* the loader's counts before the dlclose */
} instance;

/* The loader's counts of objects loaded and unloaded in the process
 * (dl_iterate_phdr's dlpi_adds and dlpi_subs, the same in every entry). */
typedef struct dl_counts {
    unsigned long long adds, subs;
} dl_counts;

static int read_counts(struct dl_phdr_info *info, size_t size, void *arg)
{
    dl_counts *c = arg;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
        c->adds = info->dlpi_adds;
        c->subs = info->dlpi_subs;
    }
    return 1;
}

static dl_counts loader_counts(void)
{
    dl_counts c = {0, 0};
    dl_iterate_phdr(read_counts, &c);
    return c;
}

/* Just before the dlclose that may unload in. */
static void note_counts(instance *in)
{
    dl_counts c = loader_counts();
    in->adds = c.adds;
    in->subs = c.subs;
}

/* How many times each face's table forgot its library. Guarded by sp_lock. */
static unsigned long forgets[SP_FACES_MAX];

/* The index of face among the faces linked in, or -1. */
static int slot_of(const sp_face *face)
{
    const sp_face *faces[SP_FACES_MAX];
    for (int i = 0, n = sp_faces(faces, SP_FACES_MAX); i < n; i++)
        if (faces[i] == face)
            return i;
    return -1;
}

/* The face's library is gone: forget it, its streams and events, unless
 * the table forgot the instance of generation gen already; the table gets
 * the entries of next, a new instance, where there is one. The table is
 * changed outside safepin's lock: the face's look-ups in next take the
 * loader's lock, which a thread in a library's constructor holds while it
 * may wait for safepin's (a look-up of its own). 1 if it forgot. */
static int forget_gen(const sp_face *face, int slot, unsigned long gen, void *next)
{
    int forgot = 0;
    sp_lock();
    if (gen == forgets[slot]) {
        sp_reaper_runtime_gone();
        forgets[slot]++;
        forgot = 1;
    }
    sp_unlock();
    if (forgot)
        face->lib_forget(next);
    return forgot;
}

static void note_instance(instance *in, const sp_face *face, int slot, struct link_map *lm, void *fn,
                          void *handle)
{
    in->face = face;
    in->slot = slot;
    size_t len = strlen(lm->l_name) + 1;
    in->name = sp_mem_alloc(len);
    if (in->name)
        memcpy(in->name, lm->l_name, len);
    in->lm = lm;
    in->addr = lm->l_addr;
    in->fn = fn;
    if (dlinfo(handle, RTLD_DI_LMID, &in->ns) != 0)
        in->ns = LM_ID_BASE;
}

/* After a dlclose of the library: if that instance is gone, forget it,
 * unless the table forgot it already (a look-up in a new instance found it
 * gone first, and the table may hold the new one's functions). Where the
 * program loaded the library again meanwhile (at the old address, where
 * the look-up found the table's functions in a loaded object), the table
 * is filled from the new instance.
 *
 * Whether it is gone is asked of the object at one of its functions
 * (dladdr), never with dlmopen in its namespace: a namespace whose last
 * object was unloaded is gone too, and glibc's dlmopen into it fails
 * ("invalid target namespace") still holding the loader's lock (2.36):
 * every later dlopen, dlclose and the exit of the process then wait for
 * it. A new instance is looked for in the base namespace only, which
 * never goes. */
static void forget_if_unloaded(const instance *in)
{
    Dl_info di;
    struct link_map *now = NULL;
    dl_counts c = loader_counts();
    /* The object there now may be a new load of the same file, at the same
     * address with its link map where the old one's was (the program saw
     * the library gone and loaded it again): the same instance only if
     * nothing was unloaded or nothing loaded since the dlclose began. */
    int there = dladdr1(in->fn, &di, (void **)&now, RTLD_DL_LINKMAP) && now == in->lm &&
                now->l_addr == in->addr;
    if (there && (c.subs == in->subs || c.adds == in->adds))
        return; /* still loaded (another reference) */
    /* Both counts moved: other threads' loads, or a reload. In a namespace
     * of its own no new instance is looked for (see above): the one there,
     * at the same address, is kept as the table's. */
    if (there && in->ns != LM_ID_BASE)
        return;
    void *h = in->ns == LM_ID_BASE && in->name ? dlopen(in->name, RTLD_LAZY | RTLD_NOLOAD) : NULL;
    int forgot = forget_gen(in->face, in->slot, in->gen, h);
    if (h)
        real_dlclose()(h);
    (void)dlerror(); /* the program's dlerror() answers for its own calls only */
    if (forgot)
        sp_log(SP_LOG_DEBUG, "debug", "the %s runtime %s was unloaded", in->face->name, in->name);
}

void sp_face_lib_check(const sp_face *face)
{
    int slot = slot_of(face);
    if (slot < 0 || !face->lib_fn || !face->lib_forget)
        return;
    sp_lock();
    void *fn = face->lib_fn();
    unsigned long gen = forgets[slot];
    sp_unlock();
    Dl_info di;
    if (!fn || dladdr(fn, &di))
        return; /* none, or still loaded (dladdr and dlclose exclude each other) */
    if (forget_gen(face, slot, gen, NULL))
        sp_log(SP_LOG_DEBUG, "debug", "the %s runtime was unloaded (found at a look-up)", face->name);
}

/* The reaper's unload of a held library, and a fork, exclude each other
 * (sp_unload_fork_begin). The reaper only tries: while a fork holds it,
 * the unload waits for the reaper's next idle turn, and the fork may wait
 * for the reaper (its pending releases). A fork waits for an unload in
 * progress at most UNLOAD_WAIT_MS (a library's destructor that waited for
 * the forking thread would otherwise hang both). */
static pthread_mutex_t unload_mu = PTHREAD_MUTEX_INITIALIZER;
static __thread int unload_fork_held __attribute__((tls_model("initial-exec")));
#define UNLOAD_WAIT_MS 1000

void sp_unload_fork_begin(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_sec += UNLOAD_WAIT_MS / 1000;
    unload_fork_held = pthread_mutex_timedlock(&unload_mu, &t) == 0;
}

void sp_unload_fork_end(void)
{
    if (unload_fork_held)
        pthread_mutex_unlock(&unload_mu);
    unload_fork_held = 0;
}

/* ---- the code an unload takes away ----------------------------------------
 * The executable segments of every object loaded just before the reaper's
 * dlclose of a library it held; those no longer loaded after it are told
 * to the fork's wrapped handlers (sp_fork_code_gone): the library and the
 * dependencies that went with it. Only the reaper thread uses these. */
#define SNAP_MAX 1024

typedef struct code_span {
    uintptr_t lo, hi;
    int seen;
} code_span;

static code_span snap[SNAP_MAX];
static int n_snap;

static int span_of(const struct dl_phdr_info *info, code_span *out)
{
    out->seen = 0;
    return sp_phdr_span(info, PF_X, &out->lo, &out->hi);
}

static int snap_one(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    (void)arg;
    if (n_snap < SNAP_MAX && span_of(info, &snap[n_snap]))
        n_snap++;
    return 0;
}

static int mark_one(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    (void)arg;
    code_span c;
    if (span_of(info, &c))
        for (int i = 0; i < n_snap; i++)
            if (snap[i].lo == c.lo && snap[i].hi == c.hi)
                snap[i].seen = 1;
    return 0;
}

static void snap_code(void)
{
    n_snap = 0;
    dl_iterate_phdr(snap_one, NULL);
}

static void tell_code_gone(void)
{
    dl_iterate_phdr(mark_one, NULL);
    for (int i = 0; i < n_snap; i++)
        if (!snap[i].seen)
            sp_fork_code_gone(snap[i].lo, snap[i].hi);
}

/* safepin's own reference to each face's library while it has work for
 * it, and that instance. Guarded by sp_lock (util/lock.h). */
static void *hold[SP_FACES_MAX];
static instance held[SP_FACES_MAX];

/* On the reaper thread, once safepin has no work left: drop the references,
 * one at a time (while work came back meanwhile, or a fork is under way,
 * at the next idle). */
static void drop_hold(void)
{
    static instance in; /* only the reaper thread drops */
    if (pthread_mutex_trylock(&unload_mu) != 0) {
        usleep(1000); /* a fork: its end, not a busy loop, is awaited */
        sp_lock();
        sp_reaper_when_idle(drop_hold);
        sp_unlock();
        return;
    }
    for (;;) {
        void *h = NULL;
        sp_lock();
        for (int slot = 0; slot < SP_FACES_MAX && !h; slot++)
            if ((h = hold[slot]) && !sp_reaper_busy()) {
                hold[slot] = NULL;
                in = held[slot];
            }
        if (h && sp_reaper_busy()) {
            sp_reaper_when_idle(drop_hold); /* work came back meanwhile */
            h = NULL;
        }
        sp_unlock();
        if (!h)
            break;
        note_counts(&in);
        snap_code();
        real_dlclose()(h);
        tell_code_gone();
        if (sp_test_fail(SP_TF_UNLOAD))
            usleep(200 * 1000); /* tests: the program sees the runtime gone first */
        sp_stack_forget();
        forget_if_unloaded(&in);
        sp_mem_free(in.name);
        in.name = NULL;
    }
    pthread_mutex_unlock(&unload_mu);
}

void sp_backend_fork_child(void)
{
    /* The child's reaper knows nothing of the references: the child keeps
     * the libraries loaded (never unloaded, never stale) rather than drop
     * them here, where no dlclose may be made. */
    for (int slot = 0; slot < SP_FACES_MAX; slot++)
        hold[slot] = NULL;
    /* The child has no reaper: whoever held the unload lock at the fork
     * (this thread's fork, or the parent's reaper at a raw fork) is gone. */
    pthread_mutex_init(&unload_mu, NULL);
    unload_fork_held = 0;
}

static int close_handle(void *handle, const sp_face **faces, int n);
static int close_lib(void *handle, const sp_face *face, int slot, struct link_map *rm, void *fn);

/* Each face forgets what may lie in an object that is unloaded (face.h). */
static void faces_forget(const sp_face **faces, int n)
{
    for (int i = 0; i < n; i++)
        if (faces[i]->forget)
            faces[i]->forget();
}

/* Every dlclose of the program's: the faces forget before and after, as
 * the object may be unloaded (the CUDA face: which definition each
 * cudaHostUnregister call site reached, cudart.c). */
int sp_dlclose(void *handle)
{
    const sp_face *faces[SP_FACES_MAX];
    int n = sp_faces(faces, SP_FACES_MAX);
    faces_forget(faces, n);
    int rc = close_handle(handle, faces, n);
    faces_forget(faces, n);
    sp_stack_forget(); /* code may be gone, and other code come at its addresses */
    return rc;
}

static int close_handle(void *handle, const sp_face **faces, int n)
{
    dlclose_fn real = real_dlclose();
    if (!real)
        return -1;
    /* A library a face keeps loaded (the CUDA driver safepin calls). */
    for (int i = 0; handle && i < n; i++)
        if (faces[i]->keep_loaded && faces[i]->keep_loaded(handle))
            return real(handle);
    for (int slot = 0; handle && slot < n; slot++) {
        void *fn = NULL;
        struct link_map *hm = NULL, *rm = faces[slot]->lib_forget ? lib_map(faces[slot], &fn) : NULL;
        if (rm && dlinfo(handle, RTLD_DI_LINKMAP, &hm) == 0 && hm == rm)
            return close_lib(handle, faces[slot], slot, rm, fn);
    }
    return real(handle); /* (which sets what dlerror() says) */
}

/* The program closes the library a face's table lies in. */
static int close_lib(void *handle, const sp_face *face, int slot, struct link_map *rm, void *fn)
{
    instance in;
    note_instance(&in, face, slot, rm, fn, handle);
    sp_lock();
    in.gen = forgets[slot];
    int want = !hold[slot] && sp_reaper_busy() && in.name;
    sp_unlock();
    /* The reference is taken outside the lock (the loader's is taken), and
     * kept if it is still wanted. */
    void *ref = want ? dlmopen(in.ns, in.name, RTLD_LAZY | RTLD_NOLOAD) : NULL, *extra = ref;
    int owned = 0;
    sp_lock();
    if (ref && !hold[slot] && sp_reaper_busy()) {
        hold[slot] = ref;
        held[slot] = in; /* with its name */
        owned = 1;
        extra = NULL;
        sp_reaper_when_idle(drop_hold);
    }
    int holding = hold[slot] != NULL;
    sp_unlock();
    if (extra)
        real_dlclose()(extra);
    note_counts(&in);
    int rc = real_dlclose()(handle);
    if (rc == 0 && !holding)
        forget_if_unloaded(&in);
    if (!owned)
        sp_mem_free(in.name);
    return rc;
}
