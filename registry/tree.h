/*
 * tree.h - the registry's ordered index (tree.c), for registry.c only: an
 * intrusive AVL tree of the ranges by base. Lock held for every call
 * (the registry's lock, util/lock.h).
 */
#ifndef SAFEPIN_REGISTRY_TREE_H
#define SAFEPIN_REGISTRY_TREE_H

#include "registry.h"

#include <stddef.h>
#include <stdint.h>

/* The range whose node n is, or NULL for NULL. */
sp_range *sp_tree_range(sp_tree_node *n);
/* Adds r (its base not in the tree); removes the node z. */
void sp_tree_insert(sp_range *r);
void sp_tree_remove(sp_tree_node *z);
/* The range with the greatest base <= addr / the smallest base > addr, or NULL. */
sp_range *sp_tree_floor(uintptr_t addr);
sp_range *sp_tree_above(uintptr_t addr);
/* In base order: the first node, the node after n; NULL at the end. */
sp_tree_node *sp_tree_first(void);
sp_tree_node *sp_tree_next(sp_tree_node *n);
/* Forgets every node (their memory is the registry's to free or abandon). */
void sp_tree_reset(void);
/* The tree's height, or a negative code if its shape is broken (-1 too
 * deep, -2 a parent link, -3 unbalanced, -4 a height); *count: its nodes. */
int sp_tree_check(size_t *count);

#endif
