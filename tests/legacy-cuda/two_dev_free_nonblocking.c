/*
 * two_dev_free_nonblocking - a registration made while device 0's context is current,
 * used through the mapped pointer by a long kernel on device 1, on a
 * CU_STREAM_NON_BLOCKING stream, unregistered and freed on device 0's
 * thread while that kernel runs; another thread launches on both devices
 * meanwhile
 * (td_run in two_devices.h).
 */
#include "two_devices.h"

int main(int argc, char **argv)
{
    (void)argc;
    return td_run(argv, TD_NONBLOCKING);
}
