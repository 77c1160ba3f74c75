/*
 * dlclose.c - follow the runtime's lifetime: the program's dlclose of it,
 * and a reload.
 */
#include "internal.h"
#include "face.h"
#include "stack.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* ---- the runtime's lifetime ---------------------------------------------
 *
 * A program may dlclose the runtime it loaded with dlopen, and load it
 * again. While safepin has work for the runtime (sp_reaper_busy: ranges,
 * pending releases, deferred calls) it keeps the library loaded with a
 * reference of its own, dropped by the reaper once that work is done. When
 * the library is really unloaded, the HIP entries of the table are
 * cleared, and filled from the next runtime that is loaded (SP_REAL_HIP,
 * or the program's dlsym on its handle): safepin never calls unloaded code.
 *
 * The reaper's dlclose of its reference unloads the library, and only then
 * does the reaper see that and clear the table: meanwhile another thread
 * of the program may already have found it gone, loaded the runtime again
 * and looked its functions up. So a look-up on a handle (dlsym, dlvsym)
 * first checks that the table's functions still lie in a loaded object
 * (sp_forget_stale_runtime), and clears the table itself if not; and each
 * forgetting counts (forgets), so that the reaper's check, made later,
 * clears only the instance it saw, never the next one the table was
 * filled from.
 */

typedef int (*dlclose_fn)(void *);
static void *real_dlclose_ptr;

static dlclose_fn real_dlclose(void)
{
    return (dlclose_fn)sp_glibc_fn(&real_dlclose_ptr, "dlclose");
}

/* The runtime instance the table's HIP functions belong to, or NULL;
 * *fnp: one of those functions. */
static struct link_map *runtime_map(void **fnp)
{
    void *fn = sp_backend_any_runtime_fn();
    Dl_info di;
    struct link_map *lm = NULL;
    if (!fn || !dladdr1(fn, &di, (void **)&lm, RTLD_DL_LINKMAP))
        return NULL;
    *fnp = fn;
    return lm;
}

/* What identifies an instance: its name, link map and load address. */
typedef struct instance {
    char name[PATH_MAX];
    struct link_map *lm;
    uintptr_t addr;
    void *fn; /* a function of it: where to look whether it is still loaded */
    Lmid_t ns; /* its namespace: a runtime dlmopen()ed is found only there */
    unsigned long gen; /* forgets when the table held it */
} instance;

/* How many times the table forgot a runtime. Guarded by sp_lock. */
static unsigned long forgets;

/* Lock held: the table's runtime is gone; forget it, its streams, events. */
static void forget_locked(void)
{
    sp_backend_forget_runtime();
    sp_reaper_runtime_gone();
    forgets++;
}

static void note_instance(instance *in, struct link_map *lm, void *fn, void *handle)
{
    snprintf(in->name, sizeof(in->name), "%s", lm->l_name);
    in->lm = lm;
    in->addr = lm->l_addr;
    in->fn = fn;
    if (dlinfo(handle, RTLD_DI_LMID, &in->ns) != 0)
        in->ns = LM_ID_BASE;
}

/* After a dlclose of the runtime: if that instance is gone, forget it,
 * unless the table forgot it already (a look-up in a new instance found it
 * gone first, and the table may hold the new one's functions). Where the
 * program loaded the runtime again meanwhile (at the old address, where
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
    if (dladdr1(in->fn, &di, (void **)&now, RTLD_DL_LINKMAP) && now == in->lm &&
        now->l_addr == in->addr)
        return; /* still loaded (another reference) */
    void *h = in->ns == LM_ID_BASE ? dlopen(in->name, RTLD_LAZY | RTLD_NOLOAD) : NULL;
    int forgot = 0;
    sp_lock();
    if (in->gen == forgets) {
        forget_locked();
        if (h)
            sp_backend_fill_from(h);
        forgot = 1;
    }
    sp_unlock();
    if (h)
        real_dlclose()(h);
    (void)dlerror(); /* the program's dlerror() answers for its own calls only */
    if (forgot)
        sp_log(SP_LOG_DEBUG, "debug", "the HIP runtime %s was unloaded", in->name);
}

void sp_forget_stale_runtime(void)
{
    sp_lock();
    void *fn = sp_backend_any_runtime_fn();
    unsigned long gen = forgets;
    sp_unlock();
    Dl_info di;
    if (!fn || dladdr(fn, &di))
        return; /* none, or still loaded (dladdr and dlclose exclude each other) */
    int forgot = 0;
    sp_lock();
    if (gen == forgets) {
        forget_locked();
        forgot = 1;
    }
    sp_unlock();
    if (forgot)
        sp_log(SP_LOG_DEBUG, "debug", "the HIP runtime was unloaded (found at a look-up)");
}

/* safepin's own reference to the runtime while it has work for it, and
 * that instance. Guarded by sp_lock (util/lock.h). */
static void *hold;
static instance held;

/* On the reaper thread, once safepin has no work left: drop the reference. */
static void drop_hold(void)
{
    static instance in; /* only the reaper thread drops */
    sp_lock();
    void *h = hold;
    if (h && sp_reaper_busy()) {
        sp_reaper_when_idle(drop_hold); /* work came back meanwhile */
        h = NULL;
    } else if (h) {
        hold = NULL;
        in = held;
    }
    sp_unlock();
    if (!h)
        return;
    real_dlclose()(h);
    if (sp_test_fail(SP_TF_UNLOAD))
        usleep(200 * 1000); /* tests: the program sees the runtime gone first */
    sp_stack_forget();
    forget_if_unloaded(&in);
}

void sp_backend_fork_child(void)
{
    /* The child's reaper knows nothing of the reference: the child keeps
     * the runtime loaded (never unloaded, never stale) rather than drop it
     * here, where no dlclose may be made. */
    hold = NULL;
}

static int close_handle(void *handle, const sp_face **faces, int n);

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
    struct link_map *hm = NULL, *rm = NULL;
    void *fn = NULL;
    if (!handle || !(rm = runtime_map(&fn)) || dlinfo(handle, RTLD_DI_LINKMAP, &hm) != 0 || hm != rm)
        return real(handle); /* (which sets what dlerror() says) */
    /* The program closes the runtime safepin uses. */
    instance in;
    note_instance(&in, rm, fn, handle);
    sp_lock();
    in.gen = forgets;
    if (!hold && sp_reaper_busy()) {
        hold = dlmopen(in.ns, in.name, RTLD_LAZY | RTLD_NOLOAD);
        if (hold) {
            held = in;
            sp_reaper_when_idle(drop_hold);
        }
    }
    int holding = hold != NULL;
    sp_unlock();
    int rc = real(handle);
    if (rc == 0 && !holding)
        forget_if_unloaded(&in);
    return rc;
}
