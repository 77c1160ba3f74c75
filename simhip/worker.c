/*
 * worker.c - the streams' worker threads: each executes its stream's ops
 * in order, once their dependencies are done, and completes the event
 * markers that become ready; the runtime's teardown, which waits for the
 * workers; and fork, which forgets them.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>

#include "stream_int.h"

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

int sh_worker_start_locked(struct sh_stream *s)
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
    if (sh_pt_key_made)
        pthread_key_delete(sh_pt_key);
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
