/*
 * config.c - environment (personality, op delay, device count), one-time
 * initialization and fork handling.
 *
 * The environment is read once, at the first runtime call. Tests that need
 * another personality set it before that call, in a fresh process (death or
 * exit tests in "threadsafe" style).
 */
#ifdef __SANITIZE_THREAD__
#include <sanitizer/tsan_interface.h>
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

struct sh_config sh_cfg = { SH_CURRENT, 0, 1, false, 0, 20 };

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void atfork_prepare(void)
{
    sh_stream_atfork_lock();
    pthread_rwlock_wrlock(&sh_mem_lock);
}

static void atfork_parent(void)
{
    pthread_rwlock_unlock(&sh_mem_lock);
    pthread_mutex_unlock(&sh_dev_lock);
}

/* The child has one thread: no worker exists, so queued work is forgotten
 * and workers restart on demand; captures die with their threads. */
static void atfork_child(void)
{
    /* Re-initialized, not unlocked: the writer was the parent's thread and
     * the child's thread has another id. ThreadSanitizer is told it was
     * released, or it would see every later lock as taken under it. */
#ifdef __SANITIZE_THREAD__
    __tsan_mutex_pre_unlock(&sh_mem_lock, 0);
    __tsan_mutex_post_unlock(&sh_mem_lock, 0);
#endif
    pthread_rwlock_init(&sh_mem_lock, NULL);
    pthread_cond_init(&sh_dev_cond, NULL);
    sh_stream_atfork_child();
    sh_capture_atfork_child();
    pthread_mutex_unlock(&sh_dev_lock);
}

static void init_once(void)
{
    const char *p = getenv("SIMHIP_PERSONALITY");
    if (p && strcmp(p, "legacy") == 0)
        sh_cfg.personality = SH_LEGACY;
    else if (p && strcmp(p, "rocm7") == 0)
        sh_cfg.personality = SH_ROCM7;
    const char *d = getenv("SIMHIP_OP_DELAY_US");
    if (d && *d)
        sh_cfg.delay_us = (unsigned)strtoul(d, NULL, 10);
    const char *x = getenv("SIMHIP_WORKER_EXIT_DELAY_MS");
    if (x && *x)
        sh_cfg.worker_exit_delay_ms = (unsigned)strtoul(x, NULL, 10);
    const char *fw = getenv("SIMHIP_FORK_WAIT_MS");
    if (fw && *fw)
        sh_cfg.fork_wait_ms = (unsigned)strtoul(fw, NULL, 10);
    const char *n = getenv("SIMHIP_DEVICES");
    if (n && *n) {
        long v = strtol(n, NULL, 10);
        if (v < 1)
            v = 1;
        if (v > SH_MAX_DEVICES)
            v = SH_MAX_DEVICES;
        sh_cfg.ndevices = (int)v;
    }
    sh_fail_init();
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

_Thread_local bool sh_tl_after_teardown;

void sh_init(void)
{
    pthread_once(&once, init_once);
    sh_tl_after_teardown = __atomic_load_n(&sh_torn_down, __ATOMIC_RELAXED);
}

void sh_sleep_us(unsigned us)
{
    if (!us)
        return;
    struct timespec ts = { us / 1000000u, (long)(us % 1000000u) * 1000L };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}
