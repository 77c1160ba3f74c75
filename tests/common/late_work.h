/*
 * late_work.h - the unreg_late_work programs' shared part (HIP and CUDA):
 * a thread that, once the unregister call has begun, waits a while and then
 * enqueues a host function that waits, bounded, for the call to return.
 */
#ifndef SAFEPIN_TESTS_LATE_WORK_H
#define SAFEPIN_TESTS_LATE_WORK_H

#include <unistd.h>

/* Set by the program: the call began; it returned. Set here: the host
 * function gave up waiting for the return (after 3 s). */
static int late_began, late_returned, late_gave_up;

/* The host function's body. */
static inline void late_wait_return(void)
{
    for (int i = 0; i < 30000 && !__atomic_load_n(&late_returned, __ATOMIC_ACQUIRE); i++)
        usleep(100);
    if (!__atomic_load_n(&late_returned, __ATOMIC_ACQUIRE))
        __atomic_store_n(&late_gave_up, 1, __ATOMIC_RELEASE);
}

/* The enqueuing thread, before it enqueues: until the call has begun, and
 * then 100 ms more (the call is waiting for the kernel by then). */
static inline void late_wait_for_the_call(void)
{
    while (!__atomic_load_n(&late_began, __ATOMIC_ACQUIRE))
        usleep(100);
    usleep(100000);
}

#endif
