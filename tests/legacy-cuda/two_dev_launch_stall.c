/*
 * two_dev_launch_stall - the launch stall across devices: a registration used on
 * device 0 and done with is unregistered on device 0's thread while an
 * unrelated long kernel runs on device 1; another thread's launches on
 * both devices must not queue behind it
 * (td_run in two_devices.h).
 */
#include "two_devices.h"

int main(int argc, char **argv)
{
    (void)argc;
    return td_run(argv, TD_UNRELATED);
}
