/*
 * capture.c - stream capture and graphs.
 *
 * While a stream captures, the work enqueued on it becomes graph nodes
 * instead of running. hipGraphLaunch enqueues every node again, each launch.
 *
 * Capture conflicts (sh_capture_check), for hipHostRegister/Unregister,
 * hipFree, hipStreamQuery/Synchronize and hipEventSynchronize (and
 * hipEventQuery in the rocm7 personality, as from ROCm 7.0): the call
 * fails with hipErrorStreamCaptureUnsupported when
 *   - the stream it operates on is capturing, or
 *   - the calling thread's mode (hipThreadExchangeStreamCaptureMode) is not
 *     relaxed and the calling thread captures in a mode other than relaxed,
 *     or
 *   - the calling thread's mode is global and another thread captures in
 *     global mode (a thread-local caller ignores other threads' captures),
 * as clr's CHECK_STREAM_CAPTURE_SUPPORTED and CUDA's modes do.
 * The current and rocm7 personalities also invalidate that capture (its
 * EndCapture then returns hipErrorStreamCaptureInvalidated); legacy does not.
 */
#include <stdlib.h>

#include "internal.h"

static struct sh_capture *captures;
static unsigned long long next_id = 1;
static _Thread_local hipStreamCaptureMode tl_mode = hipStreamCaptureModeGlobal;

hipError_t sh_capture_check(struct sh_stream *s)
{
    hipError_t err = hipSuccess;
    pthread_t self = pthread_self();
    pthread_mutex_lock(&sh_dev_lock);
    for (struct sh_capture *c = captures; c; c = c->next) {
        bool own = pthread_equal(c->thread, self);
        bool hit = c->s == s ||
                   (tl_mode != hipStreamCaptureModeRelaxed && own && c->mode != hipStreamCaptureModeRelaxed) ||
                   (tl_mode == hipStreamCaptureModeGlobal && !own && c->mode == hipStreamCaptureModeGlobal);
        if (!hit)
            continue;
        err = hipErrorStreamCaptureUnsupported;
        if (sh_cfg.personality != SH_LEGACY)
            c->invalidated = true;
    }
    pthread_mutex_unlock(&sh_dev_lock);
    return err;
}

static void graph_free(struct sh_graph *g)
{
    if (g) {
        free(g->nodes);
        free(g);
    }
}

static int graph_add(struct sh_graph *g, const struct sh_work *w)
{
    if (g->n == g->cap) {
        size_t nc = g->cap ? g->cap * 2 : 16;
        struct sh_work *nn = realloc(g->nodes, nc * sizeof *nn);
        if (!nn)
            return -1;
        g->nodes = nn;
        g->cap = nc;
    }
    g->nodes[g->n++] = *w;
    return 0;
}

hipError_t sh_capture_add_locked(struct sh_capture *c, const struct sh_work *w)
{
    if (c->invalidated)
        return hipErrorStreamCaptureInvalidated;
    return graph_add(c->graph, w) == 0 ? hipSuccess : hipErrorOutOfMemory;
}

static void capture_unlink_locked(struct sh_capture *c)
{
    for (struct sh_capture **pp = &captures; *pp; pp = &(*pp)->next) {
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    }
    c->s->capture = NULL;
}

void sh_capture_drop_locked(struct sh_capture *c)
{
    capture_unlink_locked(c);
    graph_free(c->graph);
    free(c);
}

void sh_capture_atfork_child(void)
{
    while (captures) {
        struct sh_capture *c = captures;
        captures = c->next;
        graph_free(c->graph);
        free(c);
    }
}

hipError_t hipStreamBeginCapture(hipStream_t stream, hipStreamCaptureMode mode)
{
    sh_init();
    if ((unsigned)mode > (unsigned)hipStreamCaptureModeRelaxed)
        return sh_ret(hipErrorInvalidValue);
    hipError_t err = hipSuccess;
    pthread_mutex_lock(&sh_dev_lock);
    struct sh_stream *s = sh_stream_lookup_locked(stream);
    struct sh_capture *c = NULL;
    if (!s) {
        err = hipErrorInvalidHandle;
    } else if (s->is_null) {
        err = hipErrorStreamCaptureUnsupported;
    } else if (s->capture) {
        err = hipErrorIllegalState;
    } else if (!(c = calloc(1, sizeof *c)) || !(c->graph = calloc(1, sizeof *c->graph))) {
        free(c);
        err = hipErrorOutOfMemory;
    } else {
        c->s = s;
        c->mode = mode;
        c->thread = pthread_self();
        c->id = next_id++;
        c->next = captures;
        captures = c;
        s->capture = c;
    }
    pthread_mutex_unlock(&sh_dev_lock);
    return sh_ret(err);
}

hipError_t hipStreamEndCapture(hipStream_t stream, hipGraph_t *pGraph)
{
    sh_init();
    if (!pGraph)
        return sh_ret(hipErrorInvalidValue);
    hipError_t err = hipSuccess;
    pthread_mutex_lock(&sh_dev_lock);
    struct sh_stream *s = sh_stream_lookup_locked(stream);
    struct sh_capture *c = s ? s->capture : NULL;
    if (!s) {
        err = hipErrorInvalidHandle;
    } else if (!c) {
        err = hipErrorIllegalState;
    } else if (c->mode != hipStreamCaptureModeRelaxed && !pthread_equal(c->thread, pthread_self())) {
        err = hipErrorStreamCaptureWrongThread;
    } else {
        capture_unlink_locked(c);
        if (c->invalidated) {
            graph_free(c->graph);
            *pGraph = NULL;
            err = hipErrorStreamCaptureInvalidated;
        } else {
            *pGraph = (hipGraph_t)c->graph;
        }
        free(c);
    }
    pthread_mutex_unlock(&sh_dev_lock);
    return sh_ret(err);
}

static hipError_t capture_info(hipStream_t stream, hipStreamCaptureStatus *status,
                               unsigned long long *id)
{
    if (!status)
        return hipErrorInvalidValue;
    hipError_t err = hipSuccess;
    pthread_mutex_lock(&sh_dev_lock);
    struct sh_stream *s = sh_stream_lookup_locked(stream);
    if (!s) {
        err = hipErrorInvalidHandle;
    } else if (!s->capture) {
        *status = hipStreamCaptureStatusNone;
    } else {
        *status = s->capture->invalidated ? hipStreamCaptureStatusInvalidated
                                          : hipStreamCaptureStatusActive;
        if (id)
            *id = s->capture->id;
    }
    pthread_mutex_unlock(&sh_dev_lock);
    return err;
}

hipError_t hipStreamIsCapturing(hipStream_t stream, hipStreamCaptureStatus *pCaptureStatus)
{
    sh_init();
    return sh_ret(capture_info(stream, pCaptureStatus, NULL));
}

hipError_t hipStreamGetCaptureInfo(hipStream_t stream, hipStreamCaptureStatus *pCaptureStatus,
                                   unsigned long long *pId)
{
    sh_init();
    return sh_ret(capture_info(stream, pCaptureStatus, pId));
}

hipError_t hipThreadExchangeStreamCaptureMode(hipStreamCaptureMode *mode)
{
    sh_init();
    if (!mode || (unsigned)*mode > (unsigned)hipStreamCaptureModeRelaxed)
        return sh_ret(hipErrorInvalidValue);
    hipStreamCaptureMode old = tl_mode;
    tl_mode = *mode;
    *mode = old;
    return hipSuccess;
}

/* ---- graphs: an executable graph is a copy of the captured nodes -------- */

hipError_t hipGraphInstantiate(hipGraphExec_t *pGraphExec, hipGraph_t graph,
                               hipGraphNode_t *pErrorNode, char *pLogBuffer, size_t bufferSize)
{
    sh_init();
    if (!pGraphExec || !graph)
        return sh_ret(hipErrorInvalidValue);
    const struct sh_graph *g = (const struct sh_graph *)graph;
    struct sh_graph *x = calloc(1, sizeof *x);
    if (!x)
        return sh_ret(hipErrorOutOfMemory);
    for (size_t i = 0; i < g->n; i++) {
        if (graph_add(x, &g->nodes[i]) != 0) {
            graph_free(x);
            return sh_ret(hipErrorOutOfMemory);
        }
    }
    if (pErrorNode)
        *pErrorNode = NULL;
    if (pLogBuffer && bufferSize)
        pLogBuffer[0] = '\0';
    *pGraphExec = (hipGraphExec_t)x;
    return hipSuccess;
}

hipError_t hipGraphLaunch(hipGraphExec_t graphExec, hipStream_t stream)
{
    sh_init();
    if (!graphExec)
        return sh_ret(hipErrorInvalidValue);
    const struct sh_graph *x = (const struct sh_graph *)graphExec;
    hipError_t err = hipSuccess;
    pthread_mutex_lock(&sh_dev_lock);
    struct sh_stream *s = sh_stream_lookup_locked(stream);
    if (!s)
        err = hipErrorInvalidHandle;
    for (size_t i = 0; s && err == hipSuccess && i < x->n; i++)
        err = sh_enqueue_locked(s, &x->nodes[i], NULL, 0, NULL);
    pthread_mutex_unlock(&sh_dev_lock);
    return sh_ret(err);
}

hipError_t hipGraphExecDestroy(hipGraphExec_t graphExec)
{
    sh_init();
    if (!graphExec)
        return sh_ret(hipErrorInvalidValue);
    graph_free((struct sh_graph *)graphExec);
    return hipSuccess;
}

hipError_t hipGraphDestroy(hipGraph_t graph)
{
    sh_init();
    if (!graph)
        return sh_ret(hipErrorInvalidValue);
    graph_free((struct sh_graph *)graph);
    return hipSuccess;
}

/* ---- graphs built node by node -------------------------------------------
 * A node may depend only on nodes that exist already, so the order nodes
 * are added in is a valid order to run them: a graph runs its nodes in that
 * order, one after the other (dependencies are checked, not needed).
 * A node handle is its position in its graph, plus one. */

static hipError_t add_node(hipGraphNode_t *out, hipGraph_t graph, const hipGraphNode_t *deps,
                           size_t ndeps, const struct sh_work *w)
{
    sh_init();
    struct sh_graph *g = (struct sh_graph *)graph;
    if (!out || !g || (ndeps && !deps))
        return sh_ret(hipErrorInvalidValue);
    for (size_t i = 0; i < ndeps; i++)
        if (!deps[i] || (uintptr_t)deps[i] > g->n)
            return sh_ret(hipErrorInvalidValue);
    pthread_mutex_lock(&sh_dev_lock);
    int rc = graph_add(g, w);
    size_t n = g->n;
    pthread_mutex_unlock(&sh_dev_lock);
    if (rc != 0)
        return sh_ret(hipErrorOutOfMemory);
    *out = (hipGraphNode_t)(uintptr_t)n;
    return hipSuccess;
}

hipError_t hipGraphCreate(hipGraph_t *pGraph, unsigned int flags)
{
    sh_init();
    if (!pGraph || flags != 0)
        return sh_ret(hipErrorInvalidValue);
    struct sh_graph *g = calloc(1, sizeof *g);
    if (!g)
        return sh_ret(hipErrorOutOfMemory);
    *pGraph = (hipGraph_t)g;
    return hipSuccess;
}

hipError_t hipGraphAddEmptyNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
                                const hipGraphNode_t *pDependencies, size_t numDependencies)
{
    struct sh_work w = { .kind = W_NOP };
    return add_node(pGraphNode, graph, pDependencies, numDependencies, &w);
}

hipError_t hipGraphAddHostNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
                               const hipGraphNode_t *pDependencies, size_t numDependencies,
                               const hipHostNodeParams *pNodeParams)
{
    if (!pNodeParams || !pNodeParams->fn)
        return sh_ret(hipErrorInvalidValue);
    struct sh_work w = { .kind = W_HOSTFN, .hfn = pNodeParams->fn, .arg = pNodeParams->userData };
    return add_node(pGraphNode, graph, pDependencies, numDependencies, &w);
}

hipError_t hipGraphAddMemcpyNode1D(hipGraphNode_t *pGraphNode, hipGraph_t graph,
                                   const hipGraphNode_t *pDependencies, size_t numDependencies,
                                   void *dst, const void *src, size_t count, hipMemcpyKind kind)
{
    if (!dst || !src || count == 0 || (unsigned)kind > (unsigned)hipMemcpyDefault)
        return sh_ret(hipErrorInvalidValue);
    struct sh_work w;
    sh_copy_work(&w, dst, src, count);
    return add_node(pGraphNode, graph, pDependencies, numDependencies, &w);
}

/* One row (height 1) of 1-, 2- or 4-byte elements. */
hipError_t hipGraphAddMemsetNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
                                 const hipGraphNode_t *pDependencies, size_t numDependencies,
                                 const hipMemsetParams *p)
{
    if (!p || !p->dst || p->width == 0 || p->height != 1 ||
        (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4))
        return sh_ret(hipErrorInvalidValue);
    struct sh_work w = { .kind = W_MEMSET, .dst = p->dst, .value = (int)p->value,
                         .elem = p->elementSize, .n = p->width };
    return add_node(pGraphNode, graph, pDependencies, numDependencies, &w);
}

hipError_t hipGraphAddDependencies(hipGraph_t graph, const hipGraphNode_t *from,
                                   const hipGraphNode_t *to, size_t numDependencies)
{
    sh_init();
    struct sh_graph *g = (struct sh_graph *)graph;
    if (!g || (numDependencies && (!from || !to)))
        return sh_ret(hipErrorInvalidValue);
    for (size_t i = 0; i < numDependencies; i++)
        if (!from[i] || !to[i] || (uintptr_t)from[i] > g->n || (uintptr_t)to[i] > g->n ||
            (uintptr_t)from[i] >= (uintptr_t)to[i])
            return sh_ret(hipErrorInvalidValue); /* a later node cannot come first here */
    return hipSuccess;
}
