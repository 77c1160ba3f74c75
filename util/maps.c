/*
 * maps.c - the process's mappings, read from /proc/self/maps (see maps.h).
 */
#include "maps.h"
#include "ownstack.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* One line "lo-hi perms ...": its bounds and whether it serves. */
static int parse_line(const char *s, uintptr_t *lo, uintptr_t *hi, int *ok, int read_only_ok)
{
    char *end;
    *lo = (uintptr_t)strtoull(s, &end, 16);
    if (*end != '-')
        return -1;
    *hi = (uintptr_t)strtoull(end + 1, &end, 16);
    if (*end != ' ' || end[1] == '\0' || end[2] == '\0')
        return -1;
    int r = end[1] == 'r', w = end[2] == 'w';
    *ok = r && (w || read_only_ok);
    return 0;
}

static int pinnable(uintptr_t addr, size_t len, int read_only_ok)
{
    if (len == 0)
        return 1;
    uintptr_t want = addr, last = addr + len; /* [want, last) still to cover */
    if (last < addr)
        return 0;
    /* Raw system calls: no hook of safepin's, nor a sanitizer's, sees them,
     * and the descriptor is closed before anything else can run here. */
    int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[4096];
    size_t have = 0;
    int verdict = -1;
    for (;;) {
        ssize_t n = syscall(SYS_read, fd, buf + have, sizeof(buf) - 1 - have);
        if (n <= 0) {
            verdict = n == 0 ? 0 : -1; /* the end with pages left uncovered: a hole */
            break;
        }
        have += (size_t)n;
        buf[have] = '\0';
        char *line = buf, *nl;
        while ((nl = memchr(line, '\n', have - (size_t)(line - buf))) != NULL) {
            *nl = '\0';
            uintptr_t lo, hi;
            int ok;
            if (parse_line(line, &lo, &hi, &ok, read_only_ok) == 0 && hi > want) {
                if (lo > want || !ok) {
                    verdict = 0; /* a hole before this mapping, or one that cannot serve */
                    goto done;
                }
                want = hi;
                if (want >= last) {
                    verdict = 1;
                    goto done;
                }
            }
            line = nl + 1;
        }
        have -= (size_t)(line - buf);
        memmove(buf, line, have);
        if (have >= sizeof(buf) - 1) /* a line longer than the buffer: skip it */
            have = 0;
    }
done:
    syscall(SYS_close, fd);
    return verdict;
}

/* The walk's buffer is on safepin's stack (util/ownstack.h): a register
 * refused on a PTHREAD_STACK_MIN thread has no 4 KiB to spare. */
typedef struct pinnable_call {
    uintptr_t addr;
    size_t len;
    int read_only_ok, verdict;
} pinnable_call;

static void pinnable_own(void *p)
{
    pinnable_call *c = p;
    c->verdict = pinnable(c->addr, c->len, c->read_only_ok);
}

int sp_maps_pinnable(uintptr_t addr, size_t len, int read_only_ok)
{
    pinnable_call c = {addr, len, read_only_ok, -1};
    sp_call_on_own_stack(pinnable_own, &c);
    return c.verdict;
}
