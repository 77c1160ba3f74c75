/*
 * floor.c - the cheapest possible LD_PRELOAD free hook: free() forwards to
 * the next free (resolved once, as safepin resolves its real functions).
 * make bench runs the free_hook loop under it, side by side with safepin,
 * to show what any interposed free costs by itself.
 */
#include <dlfcn.h>
#include <stddef.h>

extern void __libc_free(void *);

static void (*next_free)(void *);

__attribute__((constructor)) static void floor_init(void)
{
    next_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
}

__attribute__((visibility("default"))) void free(void *p)
{
    void (*f)(void *) = next_free;
    if (__builtin_expect(f != NULL, 1))
        f(p);
    else
        __libc_free(p);
}
