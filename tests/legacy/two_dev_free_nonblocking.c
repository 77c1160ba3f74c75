/*
 * two_dev_free_nonblocking - a registration made while device 0 is current,
 * used through the mapped pointer by a kernel on device 1, on
 * a stream made with hipStreamNonBlocking,
 * then unregistered and freed while device 1 is still busy
 * (td_unregister_free_busy in two_devices.h).
 */
#include "two_devices.h"

int main(int argc, char **argv)
{
    (void)argc;
    return td_unregister_free_busy(argv, TD_NONBLOCKING);
}
