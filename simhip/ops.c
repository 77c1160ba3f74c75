/*
 * ops.c - executing one work item on a stream's worker thread.
 *
 * SIMHIP_OP_DELAY_US delays every device operation (copy, memset, kernel,
 * host function, callback) before it touches memory; event markers and
 * waits are exempt.
 */
#include "internal.h"

_Thread_local struct sh_stream *sh_tl_hostfn_stream;
_Thread_local uint64_t sh_tl_hostfn_seq;

void sh_execute(struct sh_stream *s, struct sh_op *op)
{
    struct sh_work *w = &op->w;
    switch (w->kind) {
    case W_COPY:
        sh_sleep_us(sh_cfg.delay_us);
        sh_device_copy(w->dst, w->src, w->n, w->check_dst, w->check_src);
        break;
    case W_MEMSET:
        sh_sleep_us(sh_cfg.delay_us);
        sh_device_fill(w->dst, w->value, w->elem, w->n);
        break;
    case W_KERNEL:
        sh_sleep_us(sh_cfg.delay_us);
        w->kfn(w->arg);
        break;
    case W_HOSTFN:
    case W_CALLBACK:
        sh_sleep_us(sh_cfg.delay_us);
        sh_tl_hostfn_stream = s;
        sh_tl_hostfn_seq = op->seq;
        if (w->kind == W_HOSTFN)
            w->hfn(w->arg);
        else
            w->cb(w->handle, hipSuccess, w->arg);
        sh_tl_hostfn_stream = NULL;
        break;
    case W_MARKER:
        sh_event_marker(w->ev, w->ev_gen);
        break;
    case W_NOP:
        break;
    }
}
