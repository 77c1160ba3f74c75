/*
 * fork.c - every way a process forks (DESIGN G9, G12).
 *
 * What the child must inherit is what a bare run leaves: the releases the
 * program's unregisters left pending (a revive grace, the hold, a release
 * deferred by a capture or a host function) completed before the fork, and
 * safepin's state whole, with no lock held by a thread the child does not
 * have. The ways in:
 *
 * - fork(), and the forks inside libc that run the pthread_atfork handlers
 *   (daemon(), forkpty(), ...): safepin's handlers are registered at
 *   start-up, before any other library's (sp_fork_init), so that
 *   - its prepare handler runs last of all: it takes safepin's locks (the
 *     process lock, then diag's: the order every path takes them in), so no
 *     other thread holds them across the fork;
 *   - its child handler runs first: the child carries out the frees and
 *     unmaps its parent deferred, keeps its parent's ranges as inherited
 *     extents (no call of safepin's own is ever made on them), and forgets
 *     the rest (the reaper, the streams); its one thread is its main thread.
 *   The pending releases are completed by the first prepare handler to run:
 *   every handler registered after safepin's (the runtime's, whose own
 *   prepare may lock the runtime; the program's) is wrapped (see "the
 *   wrapped prepare handlers"), and the wrapper completes them before the
 *   handler runs, then completes what that handler itself left pending (a
 *   program whose prepare handler unregisters or frees registered memory).
 *   With no handler of another's, safepin's own prepare does it.
 * - _Fork(): runs no handler; safepin's export runs its own around it.
 * - a raw fork or clone system call (no handler, no export): the child
 *   finds out at its first entry into safepin's lock (util/forkwatch.h) and
 *   recovers there: the lock as it was at the fork (free: the parent's state
 *   was whole and is kept as above; held by a thread that is gone: a fresh
 *   lock, and the parent's ranges forgotten without being read). The
 *   releases pending at such a fork were not completed: the child may see
 *   them registered.
 * A fork from a signal handler that interrupted safepin's own code on this
 * thread (the lock already ours): nothing is waited for or taken, and the
 * child forgets its parent's ranges without reading them.
 */
#include "internal.h"
#include "forkwatch.h"
#include "ownstack.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

/* This thread's fork: the prepare handler took the lock (fork_locked); the
 * pending releases were completed by the first prepare handler (begun). */
static __thread int fork_locked __attribute__((tls_model("initial-exec")));
static __thread int fork_begun __attribute__((tls_model("initial-exec")));

/* Complete the releases pending now (before any handler, or after one that
 * made more), where waiting is possible: not in a hook or under the lock
 * (a signal handler that interrupted safepin), not in a host function. */
static void complete_pending(uint64_t upto)
{
    if (sp_initialized() && !sp_lock_held() && sp_tls_in_hook == 0 && sp_tls_in_hostfn == 0 &&
        !sp_reg_empty())
        sp_reaper_fork_drain(sp_opt.drain_timeout_ms, 0, upto);
}

static void fork_begin(void)
{
    if (fork_begun)
        return;
    fork_begun = 1;
    /* First: completing the releases may leave the reaper idle, and an
     * idle reaper unloads a runtime it held, which must not happen in the
     * fork (nor under a prepare handler of that runtime's). */
    sp_unload_fork_begin();
    complete_pending(0);
}

static void fork_prepare(void)
{
    fork_begin();
    fork_locked = !sp_lock_held();
    if (fork_locked)
        sp_lock();
    sp_diag_fork_prepare();
}

static void fork_parent(void)
{
    sp_diag_fork_parent();
    if (fork_locked)
        sp_unlock();
    sp_unload_fork_end();
    fork_begun = 0;
}

/* The child: held, this thread took the lock before the fork (no other
 * thread held it then); handlers, safepin's prepare handler ran. */
static void child_common(int held, int handlers)
{
    sp_gettid_fork_child();
    sp_ownstack_fork_child();
    sp_lock_fork_child(held);
    sp_diag_fork_child(handlers);
    sp_reaper_fork_child(held); /* reads the deferred actions: before the registry goes */
    sp_reg_fork_child(held);
    sp_backend_fork_child();
    sp_exit_fork_child();
    fork_begun = 0;
    sp_forkwatch_seen();
}

static void fork_child(void) { child_common(fork_locked, 1); }

/* A raw fork's child, on its first thread into the lock (forkwatch.h). */
static void raw_fork_child(int lock_was_free)
{
    if (lock_was_free)
        sp_lock(); /* no thread of this child holds it: ours, as the prepare handler's */
    fork_locked = 0;
    child_common(lock_was_free, 0);
}

pid_t sp_fork(void)
{
    sp_init();
    pid_t (*real)(void) = sp_real.fork;
    if (!real)
        real = (pid_t(*)(void))sp_glibc_versioned("fork");
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    return real(); /* the handlers do the rest */
}

/* _Fork runs no handler: safepin's own run around it. */
pid_t sp_Fork(void)
{
    sp_init();
    pid_t (*real)(void) = sp_real._Fork;
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    fork_prepare();
    pid_t pid = real();
    if (pid == 0)
        fork_child();
    else
        fork_parent();
    return pid;
}

/* ---- the wrapped prepare handlers --------------------------------------- *
 * Prepare handlers run in the reverse order of their registration, so the
 * first one to run is the last registered. Each prepare handler registered
 * after safepin's gets a wrapper of its own (one of SP_ATFORK_WRAPS; a
 * handler past them is registered as it is) that completes the pending
 * releases before the first handler of a fork runs, and after any handler
 * that started releases of its own. A handler registered by a library that
 * is later unloaded goes with it (glibc drops it by its dso handle); its
 * slot is not reused. */
#define SP_ATFORK_WRAPS 64

typedef int (*register_fn)(void (*)(void), void (*)(void), void (*)(void), void *);

static void (*wrapped[SP_ATFORK_WRAPS])(void);
static int n_wrapped;

/* ---- code safepin's reaper unloaded ----------------------------------------
 * glibc runs prepare handlers without its atfork lock: the handler it picked
 * may lose its library before it is called. Where the program unloads it,
 * that is the program's own race, the same bare. Where safepin's reaper
 * unloads a runtime it held (dlclose.c), between glibc's pick and the first
 * handler's wait for the unload (sp_unload_fork_begin), the race is
 * safepin's: the reaper notes here the code that its unload took away
 * (sp_fork_code_gone, under the unload lock), and a wrapped handler that
 * lies in code gone since it was registered is not called (glibc has
 * dropped its registration by then). Nothing else is asked: no look-up of
 * the handler (dladdr needs the loader's lock, which another thread's
 * dlopen may hold while it waits for this fork's thread; and code in no
 * object, a JIT's or a ctypes callback, is a handler too). Each
 * registration and each unload takes the next number of one sequence. */
#define SP_GONE_MAX 64

static unsigned long atfork_seq;
static unsigned long wrapped_seq[SP_ATFORK_WRAPS];
static struct {
    uintptr_t lo, hi;
    unsigned long seq;
} gone[SP_GONE_MAX];
static unsigned n_gone;

void sp_fork_code_gone(uintptr_t lo, uintptr_t hi)
{
    unsigned i = __atomic_fetch_add(&n_gone, 1, __ATOMIC_RELAXED) % SP_GONE_MAX;
    __atomic_store_n(&gone[i].seq, 0, __ATOMIC_RELEASE); /* void while it changes */
    __atomic_store_n(&gone[i].lo, lo, __ATOMIC_RELAXED);
    __atomic_store_n(&gone[i].hi, hi, __ATOMIC_RELAXED);
    __atomic_store_n(&gone[i].seq, __atomic_add_fetch(&atfork_seq, 1, __ATOMIC_ACQ_REL),
                     __ATOMIC_RELEASE);
}

/* The handler lies in code unloaded by safepin after it was registered. */
static int gone_since(void (*handler)(void), unsigned long registered)
{
    uintptr_t pc = (uintptr_t)handler;
    for (unsigned i = 0; i < SP_GONE_MAX; i++) {
        unsigned long seq = __atomic_load_n(&gone[i].seq, __ATOMIC_ACQUIRE);
        if (seq > registered && pc >= __atomic_load_n(&gone[i].lo, __ATOMIC_RELAXED) &&
            pc < __atomic_load_n(&gone[i].hi, __ATOMIC_RELAXED))
            return 1;
    }
    return 0;
}

static void run_wrapped(int i)
{
    fork_begin();
    void (*handler)(void) = __atomic_load_n(&wrapped[i], __ATOMIC_ACQUIRE);
    if (gone_since(handler, __atomic_load_n(&wrapped_seq[i], __ATOMIC_ACQUIRE)))
        return;
    uint64_t before = sp_reaper_submitted();
    handler();
    uint64_t after = sp_reaper_submitted();
    if (after != before) /* the handler's own releases, no other thread's */
        complete_pending(after);
}

#define W(a, b) static void wrap_##a##_##b(void) { run_wrapped(a * 8 + b); }
#define W8(a) W(a, 0) W(a, 1) W(a, 2) W(a, 3) W(a, 4) W(a, 5) W(a, 6) W(a, 7)
W8(0) W8(1) W8(2) W8(3) W8(4) W8(5) W8(6) W8(7)
#undef W
#define W(a, b) wrap_##a##_##b,
static void (*const wrappers[SP_ATFORK_WRAPS])(void) = {
    W8(0) W8(1) W8(2) W8(3) W8(4) W8(5) W8(6) W8(7)
};
#undef W
#undef W8

/* These two run while a sanitizer runtime initializes: not instrumented. */
__attribute__((no_sanitize_address, no_sanitize("thread"))) static register_fn real_register(void)
{
    static void *slot;
    return (register_fn)sp_glibc_fn(&slot, "__register_atfork");
}

__attribute__((no_sanitize_address, no_sanitize("thread"))) int
sp_register_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void), void *dso)
{
    register_fn reg = real_register();
    if (!reg)
        return ENOSYS;
    if (prepare) {
        int i = __atomic_fetch_add(&n_wrapped, 1, __ATOMIC_RELAXED);
        if (i < SP_ATFORK_WRAPS) {
            __atomic_store_n(&wrapped_seq[i], __atomic_add_fetch(&atfork_seq, 1, __ATOMIC_ACQ_REL),
                             __ATOMIC_RELEASE);
            __atomic_store_n(&wrapped[i], prepare, __ATOMIC_RELEASE);
            prepare = wrappers[i];
        }
    }
    return reg(prepare, parent, child, dso);
}

void sp_fork_init(void)
{
    sp_forkwatch_init(raw_fork_child);
    register_fn reg = real_register();
    if (reg) /* first of all, unwrapped: see the top of this file */
        reg(fork_prepare, fork_parent, fork_child, NULL);
}
