/*
 * proc_maps.c - the process's mappings as the kernel has them
 * (/proc/self/maps, read on safepin's own stack without allocating), and
 * the holes of a span that a call empties or replaces, filled with
 * placeholders of safepin's own until the real call.
 */
#include "mem_int.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>

/* ---- the process's mappings (/proc/self/maps) --------------------------- */

static const char *hex_field(const char *s, const char *e, uintptr_t *v)
{
    uintptr_t x = 0;
    int n = 0;
    for (; s < e; s++, n++) {
        int d = *s >= '0' && *s <= '9' ? *s - '0' : *s >= 'a' && *s <= 'f' ? *s - 'a' + 10 : -1;
        if (d < 0)
            break;
        x = x * 16 + (uintptr_t)d;
    }
    *v = x;
    return n ? s : NULL;
}

static const char *skip_to(const char *s, const char *e, char c)
{
    while (s < e && *s != c)
        s++;
    return s < e ? s + 1 : NULL;
}

/* One line: "start-end perms offset dev inode path". 0 if it parsed. */
static int parse_vma(const char *s, const char *e, vma *v)
{
    memset(v, 0, sizeof(*v));
    if (!(s = hex_field(s, e, &v->start)) || s >= e || *s++ != '-' ||
        !(s = hex_field(s, e, &v->end)) || e - s < 6 || *s++ != ' ')
        return -1;
    v->shared = s[3] == 's';
    if (!(s = skip_to(s, e, ' ')) || !(s = hex_field(s, e, &v->offset)) ||
        !(s = skip_to(s, e, ' ')) || !(s = skip_to(s, e, ' ')))
        return -1; /* perms, offset, dev */
    for (; s < e && *s >= '0' && *s <= '9'; s++)
        v->inode = v->inode * 10 + (unsigned long)(*s - '0');
    while (s < e && *s == ' ')
        s++;
    v->sysv = e - s >= 5 && memcmp(s, "/SYSV", 5) == 0;
    return 0;
}

/* Call fn for each mapping of the process, in address order, until it
 * returns nonzero (returned). -1 if the mappings cannot be read. Allocates
 * nothing; the descriptor is safepin's own for the call. */
static int maps_walk_here(int (*fn)(const vma *v, void *arg), void *arg)
{
    int saved = errno;
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        errno = saved;
        return -1;
    }
    char buf[4096];
    size_t have = 0;
    int rc = 0, eof = 0, skipping = 0;
    while (rc == 0) {
        char *nl = memchr(buf, '\n', have);
        if (!nl && !eof && have < sizeof(buf)) {
            ssize_t n = read(fd, buf + have, sizeof(buf) - have);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                eof = 1;
            else
                have += (size_t)n;
            continue;
        }
        if (!nl && have == 0)
            break;
        /* A line longer than the buffer: its fields lead it; the rest of
         * it is skipped. */
        char *end = nl ? nl : buf + have;
        vma v;
        if (!skipping && parse_vma(buf, end, &v) == 0)
            rc = fn(&v, arg);
        skipping = !nl;
        size_t used = nl ? (size_t)(nl + 1 - buf) : have;
        memmove(buf, buf + used, have - used);
        have -= used;
    }
    close(fd);
    errno = saved;
    return rc;
}

/* maps_walk_here on safepin's stack (util/ownstack.h): its buffer is 4 KiB,
 * and the program's thread may have only PTHREAD_STACK_MIN. */
typedef struct maps_walk_call {
    int (*fn)(const vma *v, void *arg);
    void *arg;
    int rc;
} maps_walk_call;

static void maps_walk_own(void *p)
{
    maps_walk_call *c = p;
    c->rc = maps_walk_here(c->fn, c->arg);
}

int sp_maps_walk(int (*fn)(const vma *v, void *arg), void *arg)
{
    maps_walk_call c = {fn, arg, -1};
    sp_call_on_own_stack(maps_walk_own, &c);
    return c.rc;
}

int sp_find_vma(const vma *v, void *arg)
{
    find_ctx *c = arg;
    if (v->start <= c->a && c->a < v->end) {
        c->v = *v;
        c->found = 1;
        return 1;
    }
    return v->start > c->a;
}

int sp_find_shm(const vma *v, void *arg)
{
    shm_ctx *c = arg;
    if (v->start < c->a || !v->sysv || v->start - c->a != v->offset)
        return 0;
    if (!c->found) {
        c->found = 1;
        c->inode = v->inode;
    } else if (v->inode != c->inode) {
        return 0;
    }
    c->end = v->end;
    return 0;
}

/* ---- holes in a span ---------------------------------------------------------- */

/* A span that the program's call empties or replaces whole (munmap, a
 * fixed mapping, the tail a shrinking mremap cuts off) may have holes:
 * address space the kernel hands to the next mapping anyone makes. Until
 * the real call, safepin may map memory of its own (the reaper thread's
 * stack and thread-local blocks, when a release or a wait starts it; the
 * runtime's, while a release completes), and registered pages of the span
 * stay until their release (their deferred unmap would take a hole with
 * them, and whatever the program mapped there meanwhile). So each hole is
 * filled first with an inaccessible placeholder of safepin's own, which
 * the real call, or the deferred unmap, removes with the rest of the span.
 * A span mapped throughout costs one msync (MS_ASYNC only checks that);
 * holes past the first SP_HOLES are left as they are. */
typedef struct hole_ctx {
    uintptr_t pos, end;
    holes *h;
} hole_ctx;

static void add_hole(hole_ctx *c, uintptr_t at, uintptr_t end)
{
    if (end > at && c->h->n < SP_HOLES) {
        c->h->at[c->h->n] = at;
        c->h->len[c->h->n++] = end - at;
    }
}

static int find_holes(const vma *v, void *arg)
{
    hole_ctx *c = arg;
    if (v->end <= c->pos)
        return 0;
    add_hole(c, c->pos, v->start < c->end ? v->start : c->end);
    if (v->end > c->pos)
        c->pos = v->end;
    return c->pos >= c->end || c->h->n == SP_HOLES;
}

void sp_fill_holes(uintptr_t a, size_t len, holes *h)
{
    h->n = 0;
    int saved = errno;
    if (!len || syscall(SYS_msync, (void *)a, len, MS_ASYNC) == 0) {
        errno = saved;
        return;
    }
    hole_ctx c = {a, a + len, h};
    int rc = sp_maps_walk(find_holes, &c);
    if (rc == 0)
        add_hole(&c, c.pos, c.end); /* past the last mapping */
    else if (rc < 0)
        h->n = 0;
    int kept = 0;
    for (int i = 0; i < h->n; i++) {
        void *p = (void *)syscall(SYS_mmap, (void *)h->at[i], h->len[i], PROT_NONE,
                                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE,
                                  -1, 0);
        if (p == MAP_FAILED)
            continue; /* mapped meanwhile: the program's, its call acts on it */
        if ((uintptr_t)p != h->at[i]) {
            syscall(SYS_munmap, p, h->len[i]); /* a kernel before 4.17: a mere hint */
            continue;
        }
        h->at[kept] = h->at[i];
        h->len[kept++] = h->len[i];
    }
    h->n = kept;
    errno = saved;
}

/* The real call failed: the placeholders go, the holes are as they were. */
void sp_unfill_holes(const holes *h)
{
    int saved = errno;
    for (int i = 0; i < h->n; i++)
        syscall(SYS_munmap, (void *)h->at[i], h->len[i]);
    errno = saved;
}
