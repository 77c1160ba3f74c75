/*
 * ownstack.c - safepin's own stack (see ownstack.h).
 */
#include "ownstack.h"

#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define OWN_ASAN 1
#else
#define OWN_ASAN 0
#endif

static char *own_lo;   /* lowest usable byte (above the guard page); set once */
static char *own_top;  /* one past the highest: the initial stack pointer */
static int own_lock;   /* 0 free, 1 taken, 2 taken and waited for (futex) */
/* > 0 while this thread holds the stack or is taking it: a call then runs
 * in place. Set before the lock is taken, so a signal handler that arrives
 * in between does not wait for its own thread. */
__thread int sp_ownstack_tls __attribute__((tls_model("initial-exec")));

void sp_ownstack_init(void)
{
    if (__atomic_load_n(&own_top, __ATOMIC_ACQUIRE))
        return;
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    size_t len = SP_OWNSTACK_SIZE + pg;
    /* The system call itself: libc's mmap is safepin's own hook here, and
     * a sanitizer runtime's interceptor is not needed for fresh memory. */
    long m = syscall(SYS_mmap, NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == -1)
        return;
    char *base = (char *)m;
    if (syscall(SYS_mprotect, base + pg, SP_OWNSTACK_SIZE, PROT_READ | PROT_WRITE) != 0) {
        syscall(SYS_munmap, base, len);
        return;
    }
    char *old = NULL;
    if (!__atomic_compare_exchange_n(&own_lo, &old, base + pg, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        syscall(SYS_munmap, base, len); /* another thread was first */
        return;
    }
    __atomic_store_n(&own_top, base + pg + SP_OWNSTACK_SIZE, __ATOMIC_RELEASE);
}

int sp_ownstack_contains(const void *p)
{
    char *lo = __atomic_load_n(&own_lo, __ATOMIC_ACQUIRE);
    char *top = __atomic_load_n(&own_top, __ATOMIC_ACQUIRE);
    return top && (const char *)p >= lo && (const char *)p < top;
}

/* ---- the lock: a futex word, usable from a signal handler --------------- */

static long futex(int *w, int op, int val)
{
    return syscall(SYS_futex, w, op, val, NULL, NULL, 0);
}

static void lock_take(void)
{
    int c = 0;
    if (__atomic_compare_exchange_n(&own_lock, &c, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
        return;
    if (c != 2)
        c = __atomic_exchange_n(&own_lock, 2, __ATOMIC_ACQUIRE);
    while (c != 0) {
        futex(&own_lock, FUTEX_WAIT_PRIVATE, 2);
        c = __atomic_exchange_n(&own_lock, 2, __ATOMIC_ACQUIRE);
    }
}

static void lock_give(void)
{
    if (__atomic_exchange_n(&own_lock, 0, __ATOMIC_RELEASE) == 2)
        futex(&own_lock, FUTEX_WAKE_PRIVATE, 1);
}

void sp_ownstack_fork_child(void) { __atomic_store_n(&own_lock, 0, __ATOMIC_RELAXED); }

/* ---- the switch ------------------------------------------------------------ */

/* Calls fn(arg) with the stack pointer at top (16-byte aligned); the
 * caller's frame is found through the frame pointer (its unwind rule says
 * so), so unwinders walk from fn's frames back onto the caller's stack. */
__attribute__((visibility("hidden"))) void sp_ownstack_switch(void (*fn)(void *), void *arg,
                                                              void *top);

#if defined(__x86_64__)
#define OWN_SWITCH 1
#ifdef __CET__
#define OWN_ENDBR "    endbr64\n"
#else
#define OWN_ENDBR ""
#endif
__asm__(".text\n"
        ".globl sp_ownstack_switch\n"
        ".hidden sp_ownstack_switch\n"
        ".type sp_ownstack_switch, @function\n"
        "sp_ownstack_switch:\n"
        "    .cfi_startproc\n"
        OWN_ENDBR
        "    pushq %rbp\n"
        "    .cfi_def_cfa_offset 16\n"
        "    .cfi_offset %rbp, -16\n"
        "    movq %rsp, %rbp\n"
        "    .cfi_def_cfa_register %rbp\n"
        "    movq %rdx, %rsp\n"
        "    movq %rdi, %rax\n"
        "    movq %rsi, %rdi\n"
        "    callq *%rax\n"
        "    movq %rbp, %rsp\n"
        "    .cfi_def_cfa_register %rsp\n"
        "    popq %rbp\n"
        "    .cfi_def_cfa_offset 8\n"
        "    .cfi_restore %rbp\n"
        "    ret\n"
        "    .cfi_endproc\n"
        ".size sp_ownstack_switch, .-sp_ownstack_switch\n");
#elif defined(__aarch64__)
#define OWN_SWITCH 1
#if defined(__ARM_FEATURE_BTI_DEFAULT)
#define OWN_BTI "    hint #34\n" /* bti c */
#else
#define OWN_BTI ""
#endif
__asm__(".text\n"
        ".globl sp_ownstack_switch\n"
        ".hidden sp_ownstack_switch\n"
        ".type sp_ownstack_switch, %function\n"
        "sp_ownstack_switch:\n"
        "    .cfi_startproc\n"
        OWN_BTI
        "    stp x29, x30, [sp, #-16]!\n"
        "    .cfi_def_cfa_offset 16\n"
        "    .cfi_offset x29, -16\n"
        "    .cfi_offset x30, -8\n"
        "    mov x29, sp\n"
        "    .cfi_def_cfa_register x29\n"
        "    mov sp, x2\n"
        "    mov x3, x0\n"
        "    mov x0, x1\n"
        "    blr x3\n"
        "    mov sp, x29\n"
        "    .cfi_def_cfa_register sp\n"
        "    ldp x29, x30, [sp], #16\n"
        "    .cfi_def_cfa_offset 0\n"
        "    .cfi_restore x29\n"
        "    .cfi_restore x30\n"
        "    ret\n"
        "    .cfi_endproc\n"
        ".size sp_ownstack_switch, .-sp_ownstack_switch\n");
#else
#define OWN_SWITCH 0
#endif

typedef struct own_call {
    void (*fn)(void *);
    void *arg;
#if OWN_ASAN
    const void *caller_bottom; /* the caller's stack, as ASan knows it */
    size_t caller_size;
#endif
} own_call;

/* The first frame on safepin's stack. */
static void own_entry(void *p)
{
    own_call *c = p;
#if OWN_ASAN
    __sanitizer_finish_switch_fiber(NULL, &c->caller_bottom, &c->caller_size);
#endif
    c->fn(c->arg);
#if OWN_ASAN
    /* Nothing stays on this stack: its fake frames (if any) go. */
    __sanitizer_start_switch_fiber(NULL, c->caller_bottom, c->caller_size);
#endif
}

static void call_on(void (*fn)(void *), void *arg, int wait)
{
    char *top = __atomic_load_n(&own_top, __ATOMIC_ACQUIRE);
    if (!OWN_SWITCH || !top || sp_ownstack_tls) {
        fn(arg);
        return;
    }
    int cancel;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
    sp_ownstack_tls = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (wait) {
        lock_take();
    } else {
        int free_ = 0;
        if (!__atomic_compare_exchange_n(&own_lock, &free_, 1, 0, __ATOMIC_ACQUIRE,
                                         __ATOMIC_RELAXED)) {
            fn(arg); /* busy: where we are */
            __atomic_signal_fence(__ATOMIC_SEQ_CST);
            sp_ownstack_tls = 0;
            pthread_setcancelstate(cancel, NULL);
            return;
        }
    }
    own_call c = {.fn = fn, .arg = arg};
#if OWN_ASAN
    void *fake = NULL;
    __sanitizer_start_switch_fiber(&fake, own_lo, SP_OWNSTACK_SIZE);
#endif
    sp_ownstack_switch(own_entry, &c, top);
#if OWN_ASAN
    __sanitizer_finish_switch_fiber(fake, NULL, NULL);
#endif
    lock_give();
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    sp_ownstack_tls = 0;
    pthread_setcancelstate(cancel, NULL);
}

void sp_call_on_own_stack(void (*fn)(void *), void *arg) { call_on(fn, arg, 1); }

void sp_call_on_own_stack_if_free(void (*fn)(void *), void *arg) { call_on(fn, arg, 0); }
