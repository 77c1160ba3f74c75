/*
 * sync.c - waiting for device work: one stream's op (sh_wait_locked), a
 * stream, a device or every device (sh_sync).
 *
 * A wait made from inside a host function is checked first: if what it
 * waits for depends (directly or through other streams) on the host
 * function's own op, it would deadlock, and simhip aborts saying so.
 */
#include <stdlib.h>

#include "stream_int.h"

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
            if (sh_null_streams[d])
                add_null_targets(&t, &n, &cap, sh_null_streams[d]);
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
