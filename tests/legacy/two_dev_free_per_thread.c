/*
 * two_dev_free_per_thread - a registration made while device 0 is current,
 * used through the mapped pointer by a kernel on device 1, on
 * its per-thread default stream (hipStreamPerThread),
 * then unregistered and freed while device 1 is still busy
 * (td_unregister_free_busy in two_devices.h).
 */
#include "two_devices.h"

int main(int argc, char **argv)
{
    (void)argc;
    return td_unregister_free_busy(argv, TD_PER_THREAD);
}
