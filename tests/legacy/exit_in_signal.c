/*
 * exit_in_signal - exit() from a signal handler that interrupts a
 * register/unregister loop (a timeout handler, as batch programs have).
 *
 * Not async-signal-safe, but it works without safepin: every child exits
 * 0 at once. The signal may land while the thread is inside a hook (under
 * safepin: holding safepin's own lock); exit must then not wait for that
 * very thread. 20 children race it; a child still alive after 5 s hung.
 */
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include "legacy.h"

static void on_alarm(int sig)
{
    (void)sig;
    exit(0);
}

__attribute__((noreturn)) static int child(void)
{
    static char buf[1 << 20] __attribute__((aligned(4096)));
    signal(SIGALRM, on_alarm);
    ualarm(20000 + (unsigned)(getpid() % 7) * 3000, 0);
    for (;;) {
        hipHostRegister(buf, sizeof buf, 0);
        hipHostUnregister(buf);
    }
}

int main(void)
{
    for (int i = 0; i < 20; i++) {
        pid_t p = fork();
        if (p < 0)
            return 2;
        if (p == 0)
            return child();
        int st = 0, waited = 0;
        while (waitpid(p, &st, WNOHANG) == 0) {
            if (++waited > 500) { /* 5 s */
                fprintf(stderr, "child %d hung in exit() from its signal handler\n", i);
                (*legacy_failures())++;
                kill(p, SIGKILL);
                waitpid(p, &st, 0);
                break;
            }
            usleep(10000);
        }
        if (waited <= 500 && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
            fprintf(stderr, "child %d ended with status 0x%x\n", i, st);
            (*legacy_failures())++;
        }
    }
    return legacy_finish();
}
