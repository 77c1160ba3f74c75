/*
 * capture_rounds.h - the unreg_capture_begins programs' shared part (HIP
 * and CUDA): round by round, the main thread starts a round just before its
 * unregister call, and a capturing thread begins its capture after a random
 * spin (0 to about 40 us), so the rounds hit every point of the call.
 */
#ifndef SAFEPIN_TESTS_CAPTURE_ROUNDS_H
#define SAFEPIN_TESTS_CAPTURE_ROUNDS_H

#include <stdlib.h>

static int cr_go, cr_done;

/* Main: round i begins (i >= 1); or, with -1, the capturer ends. */
static inline void cr_start(int i) { __atomic_store_n(&cr_go, i, __ATOMIC_RELEASE); }

/* Main: until the capturer has ended round i's capture. */
static inline void cr_wait_done(int i)
{
    while (__atomic_load_n(&cr_done, __ATOMIC_ACQUIRE) != i)
        ;
}

/* Capturer: until round i begins, then the random spin; 0 if told to end. */
static inline int cr_wait_start(int i, unsigned *seed)
{
    int now;
    while ((now = __atomic_load_n(&cr_go, __ATOMIC_ACQUIRE)) != i)
        if (now < 0)
            return 0;
    int spin = rand_r(seed) % 20000;
    for (volatile int k = 0; k < spin; k++)
        ;
    return 1;
}

/* Capturer: round i's capture has ended. */
static inline void cr_end(int i) { __atomic_store_n(&cr_done, i, __ATOMIC_RELEASE); }

#endif
