/*
 * event.c - events. hipEventRecord enqueues a marker op; the event is
 * complete when its stream has executed that marker. On a capturing stream
 * it records no real marker (the event keeps its previous state).
 */
#include <stdlib.h>
#include <time.h>

#include "internal.h"

static struct sh_event *events;

static struct sh_event *event_lookup_locked(hipEvent_t h)
{
    for (struct sh_event *e = events; e; e = e->next_all)
        if ((hipEvent_t)e == h)
            return e;
    return NULL;
}

void sh_event_ref_locked(struct sh_event *e)
{
    e->refs++;
}

void sh_event_unref_locked(struct sh_event *e)
{
    if (--e->refs > 0)
        return;
    if (e->s)
        sh_stream_unref_locked(e->s);
    free(e);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void marker_at(struct sh_event *e, uint64_t gen, double t_ms)
{
    if (e->gen == gen) {
        e->t_ms = t_ms;
        e->t_valid = true;
    }
}

void sh_event_marker_locked(struct sh_event *e, uint64_t gen) { marker_at(e, gen, now_ms()); }

void sh_event_marker(struct sh_event *e, uint64_t gen)
{
    double t = now_ms();
    pthread_mutex_lock(&sh_dev_lock);
    marker_at(e, gen, t);
    pthread_mutex_unlock(&sh_dev_lock);
}

static hipError_t event_create(hipEvent_t *event, unsigned flags)
{
    sh_init();
    if (!event)
        return sh_ret(hipErrorInvalidValue);
    struct sh_event *e = calloc(1, sizeof *e);
    if (!e)
        return sh_ret(hipErrorOutOfMemory);
    e->flags = flags;
    e->refs = 1;
    pthread_mutex_lock(&sh_dev_lock);
    e->next_all = events;
    events = e;
    pthread_mutex_unlock(&sh_dev_lock);
    *event = (hipEvent_t)e;
    return hipSuccess;
}

hipError_t hipEventCreateWithFlags(hipEvent_t *event, unsigned flags)
{
    if (event && sh_fail(SH_FAIL_EVENT_CREATE))
        return sh_ret(hipErrorOutOfMemory);
    return event_create(event, flags);
}

hipError_t hipEventCreate(hipEvent_t *event)
{
    if (event && sh_fail(SH_FAIL_EVENT_CREATE))
        return sh_ret(hipErrorOutOfMemory);
    return event_create(event, 0);
}

hipError_t hipEventDestroy(hipEvent_t event)
{
    sh_init();
    pthread_mutex_lock(&sh_dev_lock);
    struct sh_event *e = event_lookup_locked(event);
    if (!e) {
        pthread_mutex_unlock(&sh_dev_lock);
        return sh_ret(hipErrorInvalidHandle);
    }
    for (struct sh_event **pp = &events; *pp; pp = &(*pp)->next_all) {
        if (*pp == e) {
            *pp = e->next_all;
            break;
        }
    }
    e->destroyed = true;
    sh_event_unref_locked(e);
    pthread_mutex_unlock(&sh_dev_lock);
    return hipSuccess;
}

hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream)
{
    sh_init();
    if (sh_fail(SH_FAIL_EVENT_RECORD))
        return sh_ret(hipErrorUnknown);
    hipError_t err = hipSuccess;
    pthread_mutex_lock(&sh_dev_lock);
    struct sh_event *e = event_lookup_locked(event);
    struct sh_stream *s = sh_stream_lookup_locked(stream);
    if (!e || !s) {
        err = hipErrorInvalidHandle;
        goto unlock;
    }
    if (s->capture)
        goto unlock; /* no real marker during capture */
    uint64_t gen = e->gen + 1, seq;
    struct sh_work w = { .kind = W_MARKER, .ev = e, .ev_gen = gen };
    err = sh_enqueue_locked(s, &w, NULL, 0, &seq);
    if (err != hipSuccess)
        goto unlock;
    e->gen = gen;
    s->refs++;
    if (e->s)
        sh_stream_unref_locked(e->s);
    e->s = s;
    e->seq = seq;
    e->recorded = true;
    e->t_valid = false;
unlock:
    pthread_mutex_unlock(&sh_dev_lock);
    return sh_ret(err);
}

hipError_t hipEventQuery(hipEvent_t event)
{
    sh_init();
    hipError_t err = hipSuccess;
    if (sh_cfg.personality == SH_ROCM7 && (err = sh_capture_check(NULL)) != hipSuccess)
        return sh_ret(err); /* ROCm 7.0 checks capture here too */
    pthread_mutex_lock(&sh_dev_lock);
    struct sh_event *e = event_lookup_locked(event);
    if (!e)
        err = hipErrorInvalidHandle;
    else if (e->recorded && e->s->done_seq < e->seq)
        err = hipErrorNotReady;
    pthread_mutex_unlock(&sh_dev_lock);
    return sh_ret(err);
}

hipError_t hipEventSynchronize(hipEvent_t event)
{
    sh_init();
    if (sh_fail(SH_FAIL_EVENT_SYNC))
        return sh_ret(hipErrorUnknown);
    pthread_mutex_lock(&sh_dev_lock);
    struct sh_event *e = event_lookup_locked(event);
    if (e)
        e->refs++;
    pthread_mutex_unlock(&sh_dev_lock);
    if (!e)
        return sh_ret(hipErrorInvalidHandle);
    hipError_t err = sh_capture_check(NULL);
    pthread_mutex_lock(&sh_dev_lock);
    if (err == hipSuccess && e->recorded)
        sh_wait_locked(e->s, e->seq, "hipEventSynchronize");
    sh_event_unref_locked(e);
    pthread_mutex_unlock(&sh_dev_lock);
    return sh_ret(err);
}

hipError_t hipEventElapsedTime(float *ms, hipEvent_t start, hipEvent_t stop)
{
    sh_init();
    if (!ms)
        return sh_ret(hipErrorInvalidValue);
    hipError_t err = hipSuccess;
    pthread_mutex_lock(&sh_dev_lock);
    struct sh_event *a = event_lookup_locked(start), *b = event_lookup_locked(stop);
    if (!a || !b || (a->flags & hipEventDisableTiming) || (b->flags & hipEventDisableTiming) ||
        !a->recorded || !b->recorded)
        err = hipErrorInvalidHandle;
    else if (a->s->done_seq < a->seq || b->s->done_seq < b->seq || !a->t_valid || !b->t_valid)
        err = hipErrorNotReady;
    else
        *ms = (float)(b->t_ms - a->t_ms);
    pthread_mutex_unlock(&sh_dev_lock);
    return sh_ret(err);
}

hipError_t hipStreamWaitEvent(hipStream_t stream, hipEvent_t event, unsigned int flags)
{
    sh_init();
    if (flags != 0)
        return sh_ret(hipErrorInvalidValue);
    hipError_t err = hipSuccess;
    pthread_mutex_lock(&sh_dev_lock);
    struct sh_event *e = event_lookup_locked(event);
    struct sh_stream *s = sh_stream_lookup_locked(stream);
    if (!e || !s) {
        err = hipErrorInvalidHandle;
    } else if (!s->capture && e->recorded) {
        struct sh_dep d = { e->s, e->seq };
        struct sh_work w = { .kind = W_NOP };
        err = sh_enqueue_locked(s, &w, &d, 1, NULL);
    }
    pthread_mutex_unlock(&sh_dev_lock);
    return sh_ret(err);
}
