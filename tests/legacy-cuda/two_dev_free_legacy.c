/*
 * two_dev_free_legacy - a registration made while device 0's context is current,
 * used through the mapped pointer by a long kernel on device 1, on its
 * legacy stream (CU_STREAM_LEGACY) from the main thread, unregistered and
 * freed on another thread, device 0's, while that kernel runs; another
 * thread launches on both devices meanwhile
 * (td_run in two_devices.h).
 */
#include "two_devices.h"

int main(int argc, char **argv)
{
    (void)argc;
    return td_run(argv, TD_LEGACY);
}
