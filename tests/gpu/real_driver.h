/*
 * real_driver.h - the driver's own answer to "is this range registered?",
 * beyond any preload.
 *
 * safepin hooks every way a program looks a driver function up (dlsym,
 * cuGetProcAddress, the exported names), and by design answers "not
 * registered" for a range whose release is still pending (G4). To see when
 * the real unregister has run (the release-latency probe, the leak checks),
 * the tests find cuMemHostGetFlags in libcuda's own dynamic symbol table,
 * read from the file the loader mapped, and call it at its load address.
 */
#ifndef REAL_DRIVER_H
#define REAL_DRIVER_H

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct rd_find { const char *path; ElfW(Addr) base; };

static inline int rd_phdr_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct rd_find *f = data;
    if (info->dlpi_name && strstr(info->dlpi_name, "libcuda.so")) {
        f->path = info->dlpi_name;
        f->base = info->dlpi_addr;
        return 1;
    }
    return 0;
}

/* The load address of `name` in the loaded libcuda, or NULL. */
static inline void *rd_lookup(const char *name)
{
    struct rd_find f = { NULL, 0 };
    dl_iterate_phdr(rd_phdr_cb, &f);
    if (!f.path)
        return NULL;
    int fd = open(f.path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    void *map = MAP_FAILED;
    if (fstat(fd, &st) == 0)
        map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return NULL;
    const ElfW(Ehdr) *eh = map;
    const ElfW(Shdr) *sh = (const ElfW(Shdr) *)((const char *)map + eh->e_shoff);
    void *found = NULL;
    for (int i = 0; i < eh->e_shnum && !found; i++) {
        if (sh[i].sh_type != SHT_DYNSYM)
            continue;
        const ElfW(Sym) *sym = (const ElfW(Sym) *)((const char *)map + sh[i].sh_offset);
        const char *str = (const char *)map + sh[sh[i].sh_link].sh_offset;
        size_t n = sh[i].sh_size / sizeof *sym;
        for (size_t k = 0; k < n; k++)
            if (sym[k].st_value && strcmp(str + sym[k].st_name, name) == 0) {
                found = (void *)(f.base + sym[k].st_value);
                break;
            }
    }
    munmap(map, (size_t)st.st_size);
    return found;
}

/* The context the probes use (the program's, saved by rd_save_context on a
 * thread that has it current), and making it current on a probe thread. */
static void *rd_ctx;

static inline void rd_save_context(void)
{
    typedef int (*get_fn)(void **);
    get_fn get = (get_fn)rd_lookup("cuCtxGetCurrent");
    if (get)
        get(&rd_ctx);
}

static inline void rd_use_context(void)
{
    typedef int (*set_fn)(void *);
    set_fn set = (set_fn)rd_lookup("cuCtxSetCurrent");
    if (set && rd_ctx)
        set(rd_ctx);
}

/* 1: the driver holds a registration covering p; 0: it does not; -1: the
 * probe could not ask (not found, or no context on this thread). */
static inline int real_registered(void *p)
{
    typedef int (*flags_fn)(unsigned *, void *);
    static flags_fn fn;
    if (!fn)
        fn = (flags_fn)rd_lookup("cuMemHostGetFlags");
    if (!fn)
        return -1;
    unsigned flags = 0;
    int e = fn(&flags, p);
    if (e == 0)
        return 1;
    if (e == 3 || e == 4 || e == 201) /* not initialized, deinitialized, no context */
        return -1;
    return 0;
}

#endif
