/*
 * legacy_fork.h - what the fork programs share: waiting for a child, and
 * device work that keeps a release pending for a while.
 */
#ifndef LEGACY_FORK_H
#define LEGACY_FORK_H

#include <sys/wait.h>
#include "legacy.h"

/* 1 once child c exited 0; otherwise says so (what) and counts a failure. */
static inline int legacy_wait_child(pid_t c, const char *what)
{
    int st = 0;
    if (c < 0 || waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "%s: child failed (status 0x%x%s)\n", what, st,
                WIFSIGNALED(st) ? ", killed by a signal" : "");
        (*legacy_failures())++;
        return 0;
    }
    return 1;
}

/* An unrelated kernel of work_us on s (its argument block stays alive). */
static inline void legacy_busy(hipStream_t s, unsigned work_us)
{
    static struct kargs slow;
    slow = (struct kargs){ .work_us = work_us };
    CHECK(simhipLaunchKernel(s, add_kernel, &slow));
}

#endif
