/*
 * api_error.c - the api-error diagnostic (see api_error.h): one helper for
 * the HIP hooks, the CUDA face and the libc hooks.
 */
#include "api_error.h"
#include "diag.h"
#include "lock.h"
#include "options.h"
#include "ownstack.h"
#include "runtime.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* How deep this thread is in the program's calls into hooks: 1 inside the
 * outermost, more inside a hook the runtime (or safepin) called from there;
 * a large value on safepin's own threads. */
static __thread int tls_depth __attribute__((tls_model("initial-exec")));
/* The outermost call's logic said its error answers a probe. */
static __thread int tls_probe __attribute__((tls_model("initial-exec")));

void sp_api_enter(sp_api_call *c)
{
    c->diags = sp_diag_thread_count();
    if (tls_depth++ == 0)
        tls_probe = 0;
}

void sp_api_leave(void) { tls_depth--; }

void sp_api_probe(void) { tls_probe = 1; }

void sp_api_own_thread(void) { tls_depth = 1 << 20; }

/* 1 if code describes the runtime's state, not the call's arguments. */
static int is_state_error(const sp_rt_ops *o, int code)
{
    if (code == o->err_gone)
        return 1;
    for (const int *e = o->state_errors; e && *e; e++)
        if (*e == code)
            return 1;
    return 0;
}

/* 1 if code says the runtime finds no GPU; the first such answer in the
 * process says so, once, with what to do on a machine without one. */
static int no_device(const sp_rt_ops *o, const char *call, int code)
{
    const int *e = o->no_device_errors;
    while (e && *e && *e != code)
        e++;
    if (!e || !*e)
        return 0;
    static int said; /* atomic */
    if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED)) {
        const char *name = o->error_name ? o->error_name(code) : NULL;
        sp_log(SP_LOG_WARN, "no-device",
               "%s answered %s (%d): the %s runtime finds no GPU here. On a machine without "
               "one, run the program on safepin's simulated device: safepin --sim -- PROGRAM",
               call, name ? name : "error", code, o->name);
    }
    return 1;
}

/* args as "a, b, c" into buf. */
static void format_args(char *buf, size_t size, const sp_api_arg *a, int n)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && o < size; i++) {
        const char *sep = i ? ", " : "";
        int w;
        if (a[i].kind == 'p')
            w = a[i].v ? snprintf(buf + o, size - o, "%s0x%llx", sep, a[i].v)
                       : snprintf(buf + o, size - o, "%sNULL", sep);
        else if (a[i].kind == 'x')
            w = snprintf(buf + o, size - o, "%s0x%llx", sep, a[i].v);
        else if (a[i].kind == 'd')
            w = snprintf(buf + o, size - o, "%s%lld", sep, (long long)a[i].v);
        else
            w = snprintf(buf + o, size - o, "%s%llu", sep, a[i].v);
        if (w < 0)
            break;
        o += (size_t)w;
    }
}

/* The line itself, formatted on safepin's stack (diag's sp_diag_at); here:
 * the stack captured on the program's. */
typedef struct api_line {
    const char *call, *note, *whose, *result;
    const sp_api_arg *args;
    int n;
    const char *(*error_name)(int);
    int code;   /* the runtime's answer; or */
    int err;    /* libc's errno (result set) */
    sp_site *here;
} api_line;

static void emit_own(void *p)
{
    api_line *l = p;
    char a[192], answer[96];
    format_args(a, sizeof(a), l->args, l->n);
    if (!l->result) {
        const char *name = l->error_name ? l->error_name(l->code) : NULL;
        snprintf(answer, sizeof(answer), "%s (%d)", name ? name : "error", l->code);
    } else if (l->err) {
        const char *name = strerrorname_np(l->err);
        snprintf(answer, sizeof(answer), "%s, errno %s (%d)", l->result, name ? name : "?", l->err);
    } else {
        snprintf(answer, sizeof(answer), "%s", l->result);
    }
    tls_depth++; /* nothing it calls counts as the program's */
    sp_diag_at(SP_API_ERROR, NULL, l->here, "%s(%s)%s: %s, %s answer to the program's arguments, passed through",
               l->call, a, l->note, answer, l->whose);
    tls_depth--;
}

void sp_api_failed(const sp_api_call *c, int rt, const char *call, const char *note, int code,
                   const sp_api_arg *args, int n)
{
    const sp_rt_ops *o = sp_rt(rt);
    if (tls_depth != 1 || code == 0 || no_device(o, call, code))
        return;
    if (!sp_opt.api_errors || tls_probe || is_state_error(o, code) ||
        sp_diag_thread_count() != c->diags)
        return;
    int saved = errno;
    api_line l = {call, note ? note : "", o->whose ? o->whose : "the runtime's", NULL, args, n,
                  o->error_name, code, 0, sp_diag_site(SP_API_ERROR)};
    sp_call_on_own_stack(emit_own, &l);
    errno = saved;
}

void sp_api_libc_failed(const char *call, const char *result, int err, int fault,
                        const sp_api_arg *args, int n)
{
    if (!fault || !sp_opt.api_errors || tls_depth != 0 || sp_lock_held())
        return;
    api_line l = {call, "", "the system's", result, args, n, NULL, 0, err,
                  sp_diag_site(SP_API_ERROR)};
    sp_call_on_own_stack(emit_own, &l);
    errno = err;
}
