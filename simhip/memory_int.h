/*
 * memory_int.h - shared by simhip's memory files only (memory.c, access.c,
 * register.c, attributes.c): the range table's look-ups and changes, all
 * with sh_mem_lock held (read for look-ups, written for changes).
 */
#ifndef SIMHIP_MEMORY_INT_H
#define SIMHIP_MEMORY_INT_H

#include "internal.h"

/* The system's page size. */
uintptr_t sh_page_size(void);

/* The range containing a, or NULL. */
struct sh_range *sh_mem_find_containing(uintptr_t a);
/* A range overlapping [b, b+n), or NULL. */
struct sh_range *sh_mem_find_overlap(uintptr_t b, size_t n);
/* 0: r is in the table; -1: out of memory. */
int sh_mem_table_insert(struct sh_range *r);
void sh_mem_table_remove(struct sh_range *r);
/* Does a registration other than r cover a byte of the page at pg? */
bool sh_mem_page_shared(uintptr_t pg, const struct sh_range *r);

#endif
