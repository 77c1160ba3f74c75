/*
 * api_error.h - the api-error diagnostic, for both runtimes and libc.
 *
 * A call the program made into one of safepin's hooks that safepin passed
 * through can come back with an error the program caused by its arguments
 * (NULL, a size that wraps, a destroyed stream, a kernel address). The
 * error passes through unchanged (G10); where safepin said nothing of its
 * own about the call, an api-error line names the call, its arguments, the
 * code and its name, and where the call was made (compute-sanitizer reports
 * API errors the same way). It is not a violation: strict mode and the
 * violation counters ignore it; the report's "codes" counts it; max_repeats
 * caps it; api_errors=0 turns it off.
 *
 * Not reported, because they are not errors of the program's arguments:
 * codes that describe the runtime's or the system's state (NotReady, out of
 * memory, a runtime not initialized or torn down, an earlier asynchronous
 * failure surfacing, unknown: sp_rt_ops.state_errors),
 * answers the hook's logic marks as a probe's (sp_api_probe: an attribute
 * query of memory the runtime does not know, a look-up of a name it does
 * not have), and anything safepin itself calls: only the outermost hook of
 * a program's thread counts (a runtime that calls another hook inside,
 * safepin's own threads and its internal calls do not).
 *
 * The shims (interpose/shims.c, cuda/cuda_shims.c) open and close each call:
 *   sp_api_call c; sp_api_enter(&c); e = logic(...);
 *   if (e) sp_api_failed(&c, rt, "name", note, e, SP_API_ARGS(a, b));
 *   sp_api_leave();
 *
 * Dependencies: runtime.h (code names), diag/, options. Callers: the shims,
 * the hooks' logic (sp_api_probe), reaper/ (sp_api_own_thread).
 */
#ifndef SAFEPIN_API_ERROR_H
#define SAFEPIN_API_ERROR_H

#include <pthread.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One argument of a call, as printed: 'p' an address or handle, 'x' flags
 * (hex), 'u' and 'd' numbers. Program pointers are never dereferenced. */
typedef struct sp_api_arg {
    char kind;
    unsigned long long v;
} sp_api_arg;

typedef struct sp_api_call {
    uint64_t diags; /* the thread's diagnostic count when the call began */
} sp_api_call;

/* A program's call into a hook begins and ends (depth per thread). */
void sp_api_enter(sp_api_call *c);
void sp_api_leave(void);

/* The call c returned code (not 0) of runtime rt (SP_RT_*): its api-error
 * line, unless excluded (see above). note follows the call's name (CUDA:
 * " (cudaHostUnregister)"). errno is kept. */
void sp_api_failed(const sp_api_call *c, int rt, const char *call, const char *note, int code,
                   const sp_api_arg *args, int n);

/* A libc hook outside any runtime hook failed with errno err (result: how
 * it says so, "-1", "MAP_FAILED", "NULL"); fault: whether the error lies in
 * the arguments (interpose/mem_mappings.c decides). errno is kept. */
void sp_api_libc_failed(const char *call, const char *result, int err, int fault,
                        const sp_api_arg *args, int n);

/* Said by a hook's logic: the error this call returns is the answer to a
 * probe (the program asks whether something exists), not a bad argument. */
void sp_api_probe(void);

/* Said by a thread of safepin's own (the reaper): none of its calls are the
 * program's. */
void sp_api_own_thread(void);

static inline sp_api_arg sp_api_ptr(const void *p) { return (sp_api_arg){'p', (uintptr_t)p}; }
static inline sp_api_arg sp_api_flags(unsigned int v) { return (sp_api_arg){'x', v}; }
static inline sp_api_arg sp_api_int(long v) { return (sp_api_arg){'d', (unsigned long long)v}; }
static inline sp_api_arg sp_api_size(unsigned long v) { return (sp_api_arg){'u', v}; }
static inline sp_api_arg sp_api_devptr(unsigned long long v) { return (sp_api_arg){'p', v}; }

#ifndef __cplusplus
/* An argument by its type: unsigned int is flags (and the runtimes' enums),
 * size_t and uint64_t are numbers, a CUdeviceptr an address, any pointer
 * (data, handle or function) an address. */
#define SP_API_ARG(x)                                                                          \
    _Generic((x), int: sp_api_int, long: sp_api_int, unsigned int: sp_api_flags,              \
             unsigned long: sp_api_size, unsigned long long: sp_api_devptr,                   \
             default: sp_api_ptr)(x)
#define SP_API_N(...) SP_API_N_(__VA_ARGS__, 6, 5, 4, 3, 2, 1, 0)
#define SP_API_N_(a, b, c, d, e, f, n, ...) n
#define SP_API_CAT(a, b) SP_API_CAT_(a, b)
#define SP_API_CAT_(a, b) a##b
#define SP_API_MAP_1(a) SP_API_ARG(a)
#define SP_API_MAP_2(a, ...) SP_API_ARG(a), SP_API_MAP_1(__VA_ARGS__)
#define SP_API_MAP_3(a, ...) SP_API_ARG(a), SP_API_MAP_2(__VA_ARGS__)
#define SP_API_MAP_4(a, ...) SP_API_ARG(a), SP_API_MAP_3(__VA_ARGS__)
#define SP_API_MAP_5(a, ...) SP_API_ARG(a), SP_API_MAP_4(__VA_ARGS__)
#define SP_API_MAP_6(a, ...) SP_API_ARG(a), SP_API_MAP_5(__VA_ARGS__)
/* SP_API_ARGS(a, b, c): the arguments, as sp_api_failed's args and n. */
#define SP_API_ARGS(...)                                                                       \
    (const sp_api_arg[]){SP_API_CAT(SP_API_MAP_, SP_API_N(__VA_ARGS__))(__VA_ARGS__)},          \
        SP_API_N(__VA_ARGS__)
#endif

/* How deep the calling thread is inside safepin's hooks (interpose/init.c
 * reads it: exit() from a signal handler that interrupted a hook). */
extern __thread int sp_tls_in_hook __attribute__((tls_model("initial-exec")));

/* The body of an exported hook of runtime rt, whose logic is call (of
 * type type, 0 on success). It runs with cancellation disabled: a hook
 * keeps state across several steps (the registry, a serialized runtime
 * call, calls of safepin's own into the runtime, some of them cancellation
 * points); a thread cancelled half-way would leave that state half-done,
 * and other threads waiting on it forever. A pending cancellation acts at
 * the program's next cancellation point after the hook returns (G9). The
 * thread is marked as inside a hook, for exit() from a signal handler. An
 * error answer the program gets passes through, with an api-error line
 * unless safepin said something of its own about the call; note names the
 * runtime call that reached it ("" if none), asked after the call. */
#define SP_API_HOOK(type, rt, name, note, args, call)                          \
    do {                                                                       \
        int old_;                                                              \
        sp_api_call c_;                                                        \
        pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old_);                 \
        sp_tls_in_hook++;                                                      \
        sp_api_enter(&c_);                                                     \
        __atomic_signal_fence(__ATOMIC_SEQ_CST);                               \
        type e_ = (call);                                                      \
        __atomic_signal_fence(__ATOMIC_SEQ_CST);                               \
        if (e_ != 0)                                                           \
            sp_api_failed(&c_, rt, name, note, (int)e_, SP_API_ARGS args);     \
        sp_api_leave();                                                        \
        sp_tls_in_hook--;                                                      \
        pthread_setcancelstate(old_, NULL);                                    \
        return e_;                                                             \
    } while (0)

#ifdef __cplusplus
}
#endif
#endif
