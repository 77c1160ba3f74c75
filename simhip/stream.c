/*
 * stream.c - streams, their worker threads, ordering and synchronization.
 *
 * Each stream has a FIFO of ops and one worker thread that executes them in
 * order. Ordering across streams is expressed as dependencies (stream, seq)
 * taken at enqueue time:
 *   - an op on the null stream waits for everything enqueued so far on every
 *     blocking stream of its device (per-thread default streams included);
 *   - an op on a blocking stream waits for everything enqueued so far on its
 *     device's null stream;
 *   - hipStreamNonBlocking streams take neither;
 *   - hipStreamWaitEvent adds the event's marker as a dependency.
 * Everything is guarded by sh_dev_lock; every state change broadcasts
 * sh_dev_cond, which workers and waiters sleep on (no spinning).
 *
 * A wait made from inside a host function is checked first: if what it
 * waits for depends (directly or through other streams) on the host
 * function's own op, it would deadlock, and simhip aborts saying so.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>

#include "internal.h"

pthread_mutex_t sh_dev_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t sh_dev_cond = PTHREAD_COND_INITIALIZER;
struct sh_stream *sh_streams;
bool sh_torn_down;

/* Worker threads are joinable and listed, so that the runtime's teardown
 * (its ELF destructor, at exit or dlclose) can wait until none of them runs
 * simhip's code any more. An idle worker ends after SH_WORKER_LINGER_MS and
 * a new one starts with the stream's next op: an idle stream holds no
 * thread (a GPU queue holds none), so simhip never keeps a process alive
 * whose main thread ended with pthread_exit. Guarded by sh_dev_lock. */
#define SH_WORKER_LINGER_MS 50

struct sh_worker {
    pthread_t t;
    bool done;       /* worker_main has returned or is returning */
    bool in_hostfn;  /* running the program's host function or callback */
    struct sh_worker *next;
};
static struct sh_worker *workers;
/* Forks joining ended workers they took off the list (sh_stream_atfork_lock):
 * teardown waits for them, or it would miss those workers. */
static int fork_joins;

static struct sh_stream *null_streams[SH_MAX_DEVICES];

/* Per-thread default streams, one per device, destroyed at thread exit. */
struct pt_set {
    struct sh_stream *s[SH_MAX_DEVICES];
};
static _Thread_local struct pt_set *tl_pt;
static pthread_key_t pt_key;
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

static bool pt_key_made;

static void pt_key_init(void)
{
    pt_key_made = pthread_key_create(&pt_key, pt_destructor) == 0;
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
        if (!null_streams[dev]) {
            struct sh_stream *s = stream_new_locked(dev, hipStreamDefault, 0);
            if (!s)
                return NULL;
            s->is_null = true;
            s->handle = NULL;
            null_streams[dev] = s;
        }
        return null_streams[dev];
    }
    if (h == hipStreamPerThread) {
        pthread_once(&pt_once, pt_key_init);
        if (!tl_pt) {
            tl_pt = calloc(1, sizeof *tl_pt);
            if (!tl_pt)
                return NULL;
            pthread_setspecific(pt_key, tl_pt);
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

static bool deps_done(const struct sh_op *op)
{
    for (size_t i = 0; i < op->ndeps; i++)
        if (op->deps[i].s->done_seq < op->deps[i].seq)
            return false;
    return true;
}

static void op_free_locked(struct sh_op *op)
{
    for (size_t i = 0; i < op->ndeps; i++)
        sh_stream_unref_locked(op->deps[i].s);
    if (op->w.kind == W_MARKER && op->w.ev)
        sh_event_unref_locked(op->w.ev);
    free(op->deps);
    free(op);
}

struct worker_arg {
    struct sh_stream *s;
    struct sh_worker *w;
};

/* Dev lock held. op, the head of s, is done: it leaves the queue. */
static void pop_done_locked(struct sh_stream *s, struct sh_op *op)
{
    s->head = op->next;
    if (!s->head)
        s->tail = NULL;
    s->done_seq = op->seq;
    op_free_locked(op);
}

/* Dev lock held, an op just done. An event marker at the head of any
 * stream whose dependencies are met now completes at once, as an event's
 * barrier packet on a GPU queue completes with the work it waits for: a
 * waiter on the event wakes once, not after another round of a worker
 * thread (a null-stream marker behind a blocking stream's kernel took two
 * rounds, of two threads). A marker its worker already executes is left to
 * it. */
static void complete_ready_markers_locked(void)
{
    bool again = true;
    while (again && !sh_is_torn_down()) {
        again = false;
        for (struct sh_stream *x = sh_streams; x; x = x->next_all) {
            struct sh_op *op = x->head;
            if (!op || op->running || op->w.kind != W_MARKER || !deps_done(op))
                continue;
            if (op->w.ev)
                sh_event_marker_locked(op->w.ev, op->w.ev_gen);
            pop_done_locked(x, op); /* may free a destroyed stream: the list is walked again */
            again = true;
            break;
        }
    }
}

/* Dev lock held. Waits for an op until the linger time has passed; returns
 * false when the worker should end (idle, destroyed or torn down). */
static bool wait_for_op_locked(struct sh_stream *s)
{
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_nsec += SH_WORKER_LINGER_MS * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    while (!s->head && !s->destroyed && !sh_is_torn_down())
        if (pthread_cond_timedwait(&sh_dev_cond, &sh_dev_lock, &deadline) != 0 && !s->head)
            return false;
    return s->head && !sh_is_torn_down();
}

static void *worker_main(void *arg)
{
    struct worker_arg a = *(struct worker_arg *)arg;
    struct sh_stream *s = a.s;
    free(arg);
    pthread_mutex_lock(&sh_dev_lock);
    for (;;) {
        if (!wait_for_op_locked(s))
            break;
        struct sh_op *op = s->head;
        if (!deps_done(op)) {
            /* (Then from the top: another thread may have completed a
             * marker at the head meanwhile, or torn the runtime down, and
             * then queued work never runs.) */
            pthread_cond_wait(&sh_dev_cond, &sh_dev_lock);
            continue;
        }
        op->running = true;
        a.w->in_hostfn = op->w.kind == W_HOSTFN || op->w.kind == W_CALLBACK;
        pthread_mutex_unlock(&sh_dev_lock);

        sh_execute(s, op);

        pthread_mutex_lock(&sh_dev_lock);
        a.w->in_hostfn = false;
        pop_done_locked(s, op);
        complete_ready_markers_locked();
        pthread_cond_broadcast(&sh_dev_cond);
    }
    s->worker_running = false;
    sh_stream_unref_locked(s);
    /* Join the workers that ended before this one (each is joined once:
     * taken off the list first); this one is joined by the next. */
    struct sh_worker *reap = NULL;
    for (struct sh_worker **pp = &workers; *pp;) {
        struct sh_worker *w = *pp;
        if (w->done) {
            *pp = w->next;
            w->next = reap;
            reap = w;
        } else {
            pp = &w->next;
        }
    }
    a.w->done = true;
    pthread_mutex_unlock(&sh_dev_lock);
    sh_sleep_us(sh_cfg.worker_exit_delay_ms * 1000u);
    while (reap) {
        struct sh_worker *next = reap->next;
        pthread_join(reap->t, NULL);
        free(reap);
        reap = next;
    }
    return NULL;
}

static int worker_start_locked(struct sh_stream *s)
{
    sigset_t all, old;
    struct sh_worker *w = calloc(1, sizeof *w);
    struct worker_arg *a = malloc(sizeof *a);
    if (!w || !a) {
        free(w);
        free(a);
        return -1;
    }
    a->s = s;
    a->w = w;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&w->t, NULL, worker_main, a);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        free(w);
        free(a);
        return -1;
    }
    w->next = workers;
    workers = w;
    s->worker_running = true;
    s->refs++;
    return 0;
}

/* How long teardown waits for the device lock and for the workers. A
 * process that calls exit() from a signal handler which interrupted a
 * runtime call holds the lock itself, or a worker waits for a lock that
 * thread holds: teardown then gives up rather than hang the exit. */
#define SH_TEARDOWN_WAIT_S 1

/* The runtime tears itself down in its destructor (process exit, or dlclose
 * of the library): calls made after it return hipErrorDeinitialized, queued
 * work is dropped (a wait for it never returns), and every worker that is
 * not running a host function of the program has ended before it returns
 * (no worker runs an unloaded simhip). */
__attribute__((destructor)) static void sh_teardown(void)
{
    pthread_t self = pthread_self();
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += SH_TEARDOWN_WAIT_S;
    if (pthread_mutex_timedlock(&sh_dev_lock, &deadline) != 0) {
        /* The lock's holder never returns: said without it (calls made
         * after this see it), and nothing to join safely. */
        __atomic_store_n(&sh_torn_down, true, __ATOMIC_RELAXED);
        pthread_cond_broadcast(&sh_dev_cond);
        return;
    }
    __atomic_store_n(&sh_torn_down, true, __ATOMIC_RELAXED);
    pthread_cond_broadcast(&sh_dev_cond);
    /* A fork joining workers it took off the list: they are seen once it is
     * done (a worker left running simhip's code would outlive the library). */
    while (fork_joins > 0 &&
           pthread_cond_timedwait(&sh_dev_cond, &sh_dev_lock, &deadline) != ETIMEDOUT)
        ;
    struct sh_worker *join = NULL;
    for (struct sh_worker **pp = &workers; *pp;) {
        struct sh_worker *w = *pp;
        if (!w->in_hostfn && !pthread_equal(w->t, self)) {
            *pp = w->next;
            w->next = join;
            join = w;
        } else {
            pp = &w->next;
        }
    }
    pthread_mutex_unlock(&sh_dev_lock);
    while (join) {
        struct sh_worker *next = join->next;
        if (pthread_timedjoin_np(join->t, NULL, &deadline) == 0)
            free(join);
        join = next;
    }
    if (pt_key_made)
        pthread_key_delete(pt_key);
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
    if (!s->worker_running && worker_start_locked(s) != 0) {
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
        struct sh_stream *ns = null_streams[s->device];
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

/* ---- waiting and deadlock detection ------------------------------------ */

struct visit {
    struct sh_stream *s;
    uint64_t upto;
};
struct visits {
    struct visit v[128];
    int n;
};

/* Does completing (x, target) require an op of w that has not completed? */
static bool reaches(struct sh_stream *x, uint64_t target, struct sh_stream *w,
                    struct visits *vs, int depth)
{
    if (target <= x->done_seq)
        return false;
    if (x == w)
        return true;
    for (int i = 0; i < vs->n; i++)
        if (vs->v[i].s == x && vs->v[i].upto >= target)
            return false;
    if (vs->n < (int)(sizeof vs->v / sizeof vs->v[0])) {
        vs->v[vs->n].s = x;
        vs->v[vs->n].upto = target;
        vs->n++;
    }
    if (depth > 64)
        return false;
    for (struct sh_op *op = x->head; op && op->seq <= target; op = op->next)
        for (size_t i = 0; i < op->ndeps; i++)
            if (reaches(op->deps[i].s, op->deps[i].seq, w, vs, depth + 1))
                return true;
    return false;
}

static void check_deadlock_locked(struct sh_stream *s, uint64_t seq, const char *api)
{
    struct sh_stream *w = sh_tl_hostfn_stream;
    if (!w)
        return;
    struct visits vs;
    vs.n = 0;
    if (reaches(s, seq, w, &vs, 0))
        sh_die("deadlock: %s called from a host function on stream %p would wait for that stream",
               api, (void *)w->handle);
}

void sh_wait_locked(struct sh_stream *s, uint64_t seq, const char *api)
{
    if (seq <= s->done_seq)
        return;
    check_deadlock_locked(s, seq, api);
    s->refs++;
    while (s->done_seq < seq)
        pthread_cond_wait(&sh_dev_cond, &sh_dev_lock);
    sh_stream_unref_locked(s);
}

static void target_add(struct sh_dep **t, size_t *n, size_t *cap, struct sh_stream *s, uint64_t seq)
{
    if (seq <= s->done_seq)
        return;
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        struct sh_dep *nt = realloc(*t, nc * sizeof *nt);
        if (!nt)
            sh_die("out of memory");
        *t = nt;
        *cap = nc;
    }
    (*t)[*n].s = s;
    (*t)[*n].seq = seq;
    (*n)++;
    s->refs++;
}

static void add_null_targets(struct sh_dep **t, size_t *n, size_t *cap, struct sh_stream *ns)
{
    target_add(t, n, cap, ns, ns->enq_seq);
    for (struct sh_stream *x = sh_streams; x; x = x->next_all)
        if (x != ns && x->device == ns->device && x->blocking && !x->is_null)
            target_add(t, n, cap, x, x->enq_seq);
}

void sh_sync(enum sh_sync_scope scope, struct sh_stream *s, int device, const char *api)
{
    struct sh_dep *t = NULL;
    size_t n = 0, cap = 0;
    pthread_mutex_lock(&sh_dev_lock);
    switch (scope) {
    case SYNC_STREAM:
        if (s->is_null)
            add_null_targets(&t, &n, &cap, s);
        else
            target_add(&t, &n, &cap, s, s->enq_seq);
        break;
    case SYNC_DEVICE:
    case SYNC_ALL_DEVICES:
        for (struct sh_stream *x = sh_streams; x; x = x->next_all)
            if (scope == SYNC_ALL_DEVICES || x->device == device)
                target_add(&t, &n, &cap, x, x->enq_seq);
        break;
    case SYNC_NULL_ALL_DEVICES:
        for (int d = 0; d < SH_MAX_DEVICES; d++)
            if (null_streams[d])
                add_null_targets(&t, &n, &cap, null_streams[d]);
        break;
    }
    for (size_t i = 0; i < n; i++)
        check_deadlock_locked(t[i].s, t[i].seq, api);
    for (size_t i = 0; i < n; i++) {
        while (t[i].s->done_seq < t[i].seq)
            pthread_cond_wait(&sh_dev_cond, &sh_dev_lock);
        sh_stream_unref_locked(t[i].s);
    }
    pthread_mutex_unlock(&sh_dev_lock);
    free(t);
}

/* Before a fork: takes the dev lock, once the workers that have ended are
 * gone. An ended worker still runs its last steps outside the lock (joining
 * the workers that ended before it, freeing them, its thread exit with the
 * thread-local destructors): code that allocates. A fork in their middle
 * leaves the child an allocator lock no thread of its own will release
 * (glibc's malloc guards itself at fork; ASan's does not: the child's next
 * allocation of that size hangs). So they are taken off the list and joined
 * first, the lock released meanwhile (a destructor of theirs may take it:
 * the per-thread streams'). The wait is bounded: the forking thread may hold
 * what an exiting worker needs (a lock of the program's, taken by its own
 * destructor), or be an ended worker itself (a fork from its destructor,
 * with another worker joining it): one not gone in time (sh_cfg.fork_wait_ms,
 * 20 ms unless SIMHIP_FORK_WAIT_MS says otherwise) goes back on the list, to
 * be joined as before, and the fork goes on. */
void sh_stream_atfork_lock(void)
{
    /* The joins are cancellation points, and fork() is none. */
    int cancel_state;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += sh_cfg.fork_wait_ms / 1000u;
    deadline.tv_nsec += (long)(sh_cfg.fork_wait_ms % 1000u) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    struct sh_worker *back = NULL;
    int joining = 0;
    for (;;) {
        pthread_mutex_lock(&sh_dev_lock);
        while (back) {
            struct sh_worker *next = back->next;
            back->next = workers;
            workers = back;
            back = next;
        }
        if (joining) {
            joining = 0;
            fork_joins--;
            pthread_cond_broadcast(&sh_dev_cond);
        }
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        if (now.tv_sec > deadline.tv_sec ||
            (now.tv_sec == deadline.tv_sec && now.tv_nsec >= deadline.tv_nsec))
            break;
        struct sh_worker *ended = NULL;
        for (struct sh_worker **pp = &workers; *pp;) {
            struct sh_worker *w = *pp;
            if (w->done && !pthread_equal(w->t, pthread_self())) {
                *pp = w->next;
                w->next = ended;
                ended = w;
            } else {
                pp = &w->next;
            }
        }
        if (!ended)
            break;
        joining = 1;
        fork_joins++;
        pthread_mutex_unlock(&sh_dev_lock);
        while (ended) {
            struct sh_worker *next = ended->next;
            if (pthread_timedjoin_np(ended->t, NULL, &deadline) == 0) {
                free(ended);
            } else {
                ended->next = back;
                back = ended;
            }
            ended = next;
        }
    }
    pthread_setcancelstate(cancel_state, NULL);
}

void sh_stream_atfork_child(void)
{
    for (struct sh_stream *s = sh_streams; s; s = s->next_all) {
        struct sh_op *op = s->head;
        while (op) {
            struct sh_op *next = op->next;
            for (size_t i = 0; i < op->ndeps; i++)
                op->deps[i].s->refs--;
            if (op->w.kind == W_MARKER && op->w.ev)
                sh_event_unref_locked(op->w.ev);
            free(op->deps);
            free(op);
            op = next;
        }
        s->head = s->tail = NULL;
        s->done_seq = s->enq_seq;
        s->capture = NULL;
        if (s->worker_running) {
            s->worker_running = false;
            s->refs--;
        }
    }
    workers = NULL; /* the parent's threads: none of them exists here */
    fork_joins = 0; /* other threads' forks: they do not exist here either */
    struct sh_stream **pp = &sh_streams;
    while (*pp) {
        struct sh_stream *s = *pp;
        if (s->refs <= 0) {
            *pp = s->next_all;
            free(s);
        } else {
            pp = &s->next_all;
        }
    }
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
