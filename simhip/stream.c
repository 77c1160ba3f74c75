/*
 * stream.c - streams and the order of their work: handles (the null
 * stream, per-thread default streams), enqueueing with the dependencies
 * that order it, and the stream API.
 *
 * Each stream has a FIFO of ops, which its worker thread executes in order
 * (worker.c). Ordering across streams is expressed as dependencies
 * (stream, seq) taken at enqueue time:
 *   - an op on the null stream waits for everything enqueued so far on every
 *     blocking stream of its device (per-thread default streams included);
 *   - an op on a blocking stream waits for everything enqueued so far on its
 *     device's null stream;
 *   - hipStreamNonBlocking streams take neither;
 *   - hipStreamWaitEvent adds the event's marker as a dependency.
 * Everything is guarded by sh_dev_lock; every state change broadcasts
 * sh_dev_cond, which workers and waiters sleep on (no spinning). Waits
 * (sh_wait_locked, sh_sync) are sync.c's.
 */
#include <stdlib.h>

#include "stream_int.h"

pthread_mutex_t sh_dev_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t sh_dev_cond = PTHREAD_COND_INITIALIZER;
struct sh_stream *sh_streams;
bool sh_torn_down;

struct sh_stream *sh_null_streams[SH_MAX_DEVICES];

/* Per-thread default streams, one per device, destroyed at thread exit. */
struct pt_set {
    struct sh_stream *s[SH_MAX_DEVICES];
};
static _Thread_local struct pt_set *tl_pt;
pthread_key_t sh_pt_key;
static pthread_once_t pt_once = PTHREAD_ONCE_INIT;

static void pt_destructor(void *v)
{
    struct pt_set *p = v;
    pthread_mutex_lock(&sh_dev_lock);
    for (int i = 0; i < SH_MAX_DEVICES; i++) {
        if (p->s[i]) {
            p->s[i]->destroyed = true;
            sh_stream_unref_locked(p->s[i]);
        }
    }
    pthread_cond_broadcast(&sh_dev_cond);
    pthread_mutex_unlock(&sh_dev_lock);
    free(p);
}

bool sh_pt_key_made;

static void pt_key_init(void)
{
    sh_pt_key_made = pthread_key_create(&sh_pt_key, pt_destructor) == 0;
}

static struct sh_stream *stream_new_locked(int device, unsigned flags, int prio)
{
    struct sh_stream *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->device = device;
    s->flags = flags;
    s->priority = prio;
    s->blocking = !(flags & hipStreamNonBlocking);
    s->refs = 1;
    s->handle = (hipStream_t)s;
    s->next_all = sh_streams;
    sh_streams = s;
    return s;
}

void sh_stream_ref_locked(struct sh_stream *s)
{
    s->refs++;
}

void sh_stream_unref_locked(struct sh_stream *s)
{
    if (--s->refs > 0)
        return;
    for (struct sh_stream **pp = &sh_streams; *pp; pp = &(*pp)->next_all) {
        if (*pp == s) {
            *pp = s->next_all;
            break;
        }
    }
    free(s);
}

struct sh_stream *sh_stream_lookup_locked(hipStream_t h)
{
    int dev = sh_current_device();
    if (h == NULL) {
        if (!sh_null_streams[dev]) {
            struct sh_stream *s = stream_new_locked(dev, hipStreamDefault, 0);
            if (!s)
                return NULL;
            s->is_null = true;
            s->handle = NULL;
            sh_null_streams[dev] = s;
        }
        return sh_null_streams[dev];
    }
    if (h == hipStreamPerThread) {
        pthread_once(&pt_once, pt_key_init);
        if (!tl_pt) {
            tl_pt = calloc(1, sizeof *tl_pt);
            if (!tl_pt)
                return NULL;
            pthread_setspecific(sh_pt_key, tl_pt);
        }
        if (!tl_pt->s[dev]) {
            struct sh_stream *s = stream_new_locked(dev, hipStreamDefault, 0);
            if (!s)
                return NULL;
            s->per_thread = true;
            s->handle = hipStreamPerThread;
            tl_pt->s[dev] = s;
        }
        return tl_pt->s[dev];
    }
    for (struct sh_stream *s = sh_streams; s; s = s->next_all)
        if ((hipStream_t)s == h && !s->destroyed && !s->is_null && !s->per_thread)
            return s;
    return NULL;
}

static void dep_add(struct sh_dep *deps, size_t *n, struct sh_stream *t, uint64_t seq)
{
    if (seq <= t->done_seq)
        return;
    deps[*n].s = t;
    deps[*n].seq = seq;
    (*n)++;
    t->refs++;
}

hipError_t sh_enqueue_locked(struct sh_stream *s, const struct sh_work *w,
                             const struct sh_dep *extra, size_t nextra, uint64_t *seq)
{
    if (seq)
        *seq = 0;
    if (sh_is_torn_down())
        return hipErrorDeinitialized;
    if (s->capture)
        return sh_capture_add_locked(s->capture, w);

    size_t cap = nextra + 1;
    if (s->is_null)
        for (struct sh_stream *t = sh_streams; t; t = t->next_all)
            cap++;
    struct sh_op *op = calloc(1, sizeof *op);
    struct sh_dep *deps = calloc(cap, sizeof *deps);
    if (!op || !deps) {
        free(op);
        free(deps);
        return hipErrorOutOfMemory;
    }
    if (!s->worker_running && sh_worker_start_locked(s) != 0) {
        free(op);
        free(deps);
        return hipErrorOutOfMemory;
    }
    size_t n = 0;
    for (size_t i = 0; i < nextra; i++)
        if (extra[i].s != s)
            dep_add(deps, &n, extra[i].s, extra[i].seq);
    if (s->is_null) {
        for (struct sh_stream *t = sh_streams; t; t = t->next_all)
            if (t != s && t->device == s->device && t->blocking && !t->is_null)
                dep_add(deps, &n, t, t->enq_seq);
    } else if (s->blocking) {
        struct sh_stream *ns = sh_null_streams[s->device];
        if (ns)
            dep_add(deps, &n, ns, ns->enq_seq);
    }
    op->w = *w;
    op->deps = deps;
    op->ndeps = n;
    op->seq = ++s->enq_seq;
    if (s->tail)
        s->tail->next = op;
    else
        s->head = op;
    s->tail = op;
    if (op->w.kind == W_MARKER && op->w.ev)
        sh_event_ref_locked(op->w.ev);
    if (seq)
        *seq = op->seq;
    pthread_cond_broadcast(&sh_dev_cond);
    return hipSuccess;
}

/* ---- the stream API ---------------------------------------------------- */

/* Resolve and reference a handle; NULL when invalid. */
static struct sh_stream *stream_get(hipStream_t h)
{
    pthread_mutex_lock(&sh_dev_lock);
    struct sh_stream *s = sh_stream_lookup_locked(h);
    if (s)
        s->refs++;
    pthread_mutex_unlock(&sh_dev_lock);
    return s;
}

static void stream_put(struct sh_stream *s)
{
    pthread_mutex_lock(&sh_dev_lock);
    sh_stream_unref_locked(s);
    pthread_mutex_unlock(&sh_dev_lock);
}

static hipError_t stream_create(hipStream_t *out, unsigned flags, int prio)
{
    sh_init();
    if (!out || (flags & ~(unsigned)hipStreamNonBlocking))
        return sh_ret(hipErrorInvalidValue);
    if (sh_fail(SH_FAIL_STREAM_CREATE))
        return sh_ret(hipErrorOutOfMemory);
    pthread_mutex_lock(&sh_dev_lock);
    struct sh_stream *s = stream_new_locked(sh_current_device(), flags, prio);
    pthread_mutex_unlock(&sh_dev_lock);
    if (!s)
        return sh_ret(hipErrorOutOfMemory);
    *out = (hipStream_t)s;
    return hipSuccess;
}

hipError_t hipStreamCreate(hipStream_t *stream)
{
    return stream_create(stream, hipStreamDefault, 0);
}

hipError_t hipStreamCreateWithFlags(hipStream_t *stream, unsigned int flags)
{
    return stream_create(stream, flags, 0);
}

hipError_t hipStreamCreateWithPriority(hipStream_t *stream, unsigned int flags, int priority)
{
    return stream_create(stream, flags, priority);
}

/* Returns at once; work already enqueued still completes. */
hipError_t hipStreamDestroy(hipStream_t stream)
{
    sh_init();
    if (stream == NULL || stream == hipStreamPerThread)
        return sh_ret(hipErrorInvalidHandle);
    pthread_mutex_lock(&sh_dev_lock);
    struct sh_stream *s = sh_stream_lookup_locked(stream);
    if (!s) {
        pthread_mutex_unlock(&sh_dev_lock);
        return sh_ret(hipErrorInvalidHandle);
    }
    if (s->capture)
        sh_capture_drop_locked(s->capture);
    s->destroyed = true;
    pthread_cond_broadcast(&sh_dev_cond);
    sh_stream_unref_locked(s);
    pthread_mutex_unlock(&sh_dev_lock);
    return hipSuccess;
}

hipError_t hipStreamSynchronize(hipStream_t stream)
{
    sh_init();
    struct sh_stream *s = stream_get(stream);
    if (!s)
        return sh_ret(hipErrorInvalidHandle);
    hipError_t e = sh_capture_check(s);
    if (e == hipSuccess)
        sh_sync(SYNC_STREAM, s, s->device, "hipStreamSynchronize");
    stream_put(s);
    return sh_ret(e);
}

hipError_t hipStreamQuery(hipStream_t stream)
{
    sh_init();
    struct sh_stream *s = stream_get(stream);
    if (!s)
        return sh_ret(hipErrorInvalidHandle);
    hipError_t e = sh_capture_check(s);
    if (e == hipSuccess) {
        pthread_mutex_lock(&sh_dev_lock);
        bool busy = s->done_seq < s->enq_seq;
        if (s->is_null)
            for (struct sh_stream *x = sh_streams; x; x = x->next_all)
                if (x->device == s->device && x->blocking && x->done_seq < x->enq_seq)
                    busy = true;
        sh_stream_unref_locked(s);
        pthread_mutex_unlock(&sh_dev_lock);
        return busy ? sh_ret(hipErrorNotReady) : hipSuccess;
    }
    stream_put(s);
    return sh_ret(e);
}

/* Enqueue one work item on the stream the program named. */
hipError_t sh_enqueue_handle(hipStream_t h, const struct sh_work *w, uint64_t *seq,
                             struct sh_stream **out)
{
    pthread_mutex_lock(&sh_dev_lock);
    struct sh_stream *s = sh_stream_lookup_locked(h);
    hipError_t e = s ? sh_enqueue_locked(s, w, NULL, 0, seq) : hipErrorInvalidHandle;
    if (s && out) {
        s->refs++;
        *out = s;
    }
    pthread_mutex_unlock(&sh_dev_lock);
    return e;
}

hipError_t hipStreamAddCallback(hipStream_t stream, hipStreamCallback_t callback,
                                void *userData, unsigned int flags)
{
    sh_init();
    if (!callback || flags != 0)
        return sh_ret(hipErrorInvalidValue);
    if (sh_fail(SH_FAIL_HOSTFN))
        return sh_ret(hipErrorUnknown);
    struct sh_work w = { .kind = W_CALLBACK, .cb = callback, .handle = stream, .arg = userData };
    return sh_ret(sh_enqueue_handle(stream, &w, NULL, NULL));
}

hipError_t hipLaunchHostFunc(hipStream_t stream, hipHostFn_t fn, void *userData)
{
    sh_init();
    if (!fn)
        return sh_ret(hipErrorInvalidValue);
    if (sh_fail(SH_FAIL_HOSTFN))
        return sh_ret(hipErrorUnknown);
    struct sh_work w = { .kind = W_HOSTFN, .hfn = fn, .handle = stream, .arg = userData };
    return sh_ret(sh_enqueue_handle(stream, &w, NULL, NULL));
}

hipError_t hipStreamGetFlags(hipStream_t stream, unsigned int *flags)
{
    sh_init();
    if (!flags)
        return sh_ret(hipErrorInvalidValue);
    struct sh_stream *s = stream_get(stream);
    if (!s)
        return sh_ret(hipErrorInvalidHandle);
    pthread_mutex_lock(&sh_dev_lock);
    *flags = s->flags;
    pthread_mutex_unlock(&sh_dev_lock);
    stream_put(s);
    return hipSuccess;
}

/* The priority given at creation, clamped to the device's range. */
hipError_t hipStreamGetPriority(hipStream_t stream, int *priority)
{
    sh_init();
    if (!priority)
        return sh_ret(hipErrorInvalidValue);
    struct sh_stream *s = stream_get(stream);
    if (!s)
        return sh_ret(hipErrorInvalidHandle);
    pthread_mutex_lock(&sh_dev_lock);
    int p = s->priority;
    pthread_mutex_unlock(&sh_dev_lock);
    stream_put(s);
    *priority = p > 0 ? 0 : p < -1 ? -1 : p;
    return hipSuccess;
}

hipError_t hipStreamGetDevice(hipStream_t stream, hipDevice_t *device)
{
    sh_init();
    if (!device)
        return sh_ret(hipErrorInvalidValue);
    struct sh_stream *s = stream_get(stream);
    if (!s)
        return sh_ret(hipErrorInvalidHandle);
    *device = s->device;
    stream_put(s);
    return hipSuccess;
}
