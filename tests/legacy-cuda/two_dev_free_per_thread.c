/*
 * two_dev_free_per_thread - a registration made while device 0's context is current,
 * used through the mapped pointer by a long kernel on device 1, on the
 * main thread's per-thread stream (CU_STREAM_PER_THREAD), unregistered and
 * freed on another thread, device 0's, while that kernel runs; another
 * thread launches on both devices meanwhile
 * (td_run in two_devices.h).
 */
#include "two_devices.h"

int main(int argc, char **argv)
{
    (void)argc;
    return td_run(argv, TD_PER_THREAD);
}
