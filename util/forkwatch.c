/*
 * forkwatch.c - see forkwatch.h.
 *
 * The page holds two words, both zero in an unseen child: [0] "seen" (1
 * once this process is known to safepin), [1] "recovering" (the thread
 * that claimed the recovery). Other threads of the child that arrive
 * meanwhile wait for [0].
 */
#include "forkwatch.h"

#include <sched.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

volatile int *sp_forkwatch_page;
static void (*g_recover)(int);
static __thread int tls_recovering __attribute__((tls_model("initial-exec")));

void sp_forkwatch_init(void (*recover)(int))
{
    if (sp_forkwatch_page)
        return;
    g_recover = recover;
    long page = sysconf(_SC_PAGESIZE);
    void *p = (void *)syscall(SYS_mmap, NULL, (size_t)page, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return;
    if (syscall(SYS_madvise, p, (size_t)page, MADV_WIPEONFORK) != 0) {
        syscall(SYS_munmap, p, (size_t)page);
        return;
    }
    ((volatile int *)p)[0] = 1;
    __atomic_store_n(&sp_forkwatch_page, (volatile int *)p, __ATOMIC_RELEASE);
}

void sp_forkwatch_seen(void)
{
    volatile int *p = sp_forkwatch_page;
    if (p)
        __atomic_store_n(&p[0], 1, __ATOMIC_RELEASE);
}

void sp_forkwatch_recover(int lock_was_free)
{
    volatile int *p = sp_forkwatch_page;
    if (!p || tls_recovering)
        return; /* the recovery's own calls into safepin */
    int zero = 0;
    if (__atomic_compare_exchange_n(&p[1], &zero, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        tls_recovering = 1;
        if (g_recover)
            g_recover(lock_was_free);
        tls_recovering = 0;
        sp_forkwatch_seen();
        return;
    }
    while (!__atomic_load_n(&p[0], __ATOMIC_ACQUIRE))
        sched_yield();
}
