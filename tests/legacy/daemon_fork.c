/*
 * daemon_fork - daemon() after an unregister.
 *
 * The program registers a 4 MiB buffer, uses it, unregisters it and
 * becomes a daemon (daemon(1, 1): glibc forks inside, without calling the
 * exported fork). The daemon asks the runtime about the buffer: bare, the
 * unregister was made before the fork, so the runtime's copy in the child
 * knows the buffer as unregistered (hipHostGetFlags refuses it). The
 * daemon's answer reaches the first process through a pipe.
 */
#include <sys/wait.h>
#include "legacy.h"

#define LEN (4ul << 20)

int main(void)
{
    int fds[2];
    if (pipe(fds) != 0)
        return 2;
    fflush(NULL);
    pid_t c = fork(); /* the process that becomes the daemon */
    if (c < 0)
        return 2;
    if (c == 0) {
        close(fds[0]);
        char *buf = aligned_alloc(4096, LEN);
        if (!buf)
            _exit(2);
        memset(buf, 1, LEN);
        hipStream_t s;
        if (hipStreamCreate(&s) != hipSuccess ||
            hipHostRegister(buf, LEN, 0) != hipSuccess ||
            hipMemcpyAsync(buf, buf, LEN, hipMemcpyHostToHost, s) != hipSuccess ||
            hipStreamSynchronize(s) != hipSuccess || hipHostUnregister(buf) != hipSuccess)
            _exit(3);
        if (daemon(1, 1) != 0)
            _exit(4);
        unsigned flags = 0;
        char verdict = hipHostGetFlags(&flags, buf) == hipSuccess ? 'R' : 'u';
        (void)!write(fds[1], &verdict, 1);
        _exit(0);
    }
    close(fds[1]);
    int st = 0;
    waitpid(c, &st, 0); /* daemon()'s parent exits at once */
    char verdict = 0;
    if (read(fds[0], &verdict, 1) != 1) {
        fprintf(stderr, "no answer from the daemon (first child status 0x%x)\n", st);
        (*legacy_failures())++;
    } else if (verdict != 'u') {
        fprintf(stderr, "the daemon sees the buffer still registered\n");
        (*legacy_failures())++;
    }
    return legacy_finish();
}
