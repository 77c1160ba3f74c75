/*
 * which_malloc - prints the file of the object whose malloc and free the
 * program uses (what the loader binds its calls to), one line each:
 *   malloc /usr/lib/x86_64-linux-gnu/libjemalloc.so.2
 *   free /work/.../libsafepin.so
 * Shows that an allocator run really replaced glibc's malloc.
 */
#include <dlfcn.h>
#include <stdio.h>

static const char *owner(const char *name)
{
    Dl_info info;
    void *f = dlsym(RTLD_DEFAULT, name);
    if (!f || !dladdr(f, &info) || !info.dli_fname)
        return "?";
    return info.dli_fname;
}

int main(void)
{
    printf("malloc %s\nfree %s\n", owner("malloc"), owner("free"));
    return 0;
}
