/*
 * maps.c - the process's mappings, read from /proc/self/maps (see maps.h).
 */
#include "maps.h"

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

/* The kernel's start_brk, field 47 of /proc/self/stat; 0 if unknown. */
static uintptr_t read_start_brk(void)
{
    int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char buf[1024];
    ssize_t n = syscall(SYS_read, fd, buf, sizeof(buf) - 1);
    syscall(SYS_close, fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    char *s = strrchr(buf, ')'); /* the end of the command's name (field 2) */
    if (!s)
        return 0;
    s++;
    for (int field = 2; field < 47; field++) { /* to the space before field 47 */
        s = strchr(s, ' ');
        if (!s)
            return 0;
        s++;
    }
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    return end != s && (*end == ' ' || *end == '\n' || *end == '\0') ? (uintptr_t)v : 0;
}

int sp_maps_in_brk_heap(uintptr_t addr, size_t len)
{
    static uintptr_t start_brk;
    static int known; /* 1: start_brk read; -1: it cannot be */
    int k = __atomic_load_n(&known, __ATOMIC_ACQUIRE);
    if (k == 0) {
        uintptr_t v = read_start_brk(); /* (two threads may both read it: the same value) */
        __atomic_store_n(&start_brk, v, __ATOMIC_RELAXED);
        k = v ? 1 : -1;
        __atomic_store_n(&known, k, __ATOMIC_RELEASE);
    }
    uintptr_t lo = __atomic_load_n(&start_brk, __ATOMIC_RELAXED);
    if (k < 0 || addr < lo || len > UINTPTR_MAX - addr)
        return 0;
    void *brk_now = sbrk(0);
    return brk_now != (void *)-1 && addr + len <= (uintptr_t)brk_now;
}

int sp_maps_pinnable(uintptr_t addr, size_t len, int read_only_ok)
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
