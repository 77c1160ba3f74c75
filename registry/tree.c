/*
 * tree.c - the registry's ordered index (registry.c): an intrusive AVL tree
 * with parent links on sp_range.node, keyed by base, for ordered and
 * overlap queries in O(log n). One tree, the registry's; every function is
 * called with the registry's lock held (tree.h).
 */
#include "registry.h"
#include "tree.h"

#include <stddef.h>
#include <stdint.h>

static sp_tree_node *g_root; /* the root; NULL: empty */

sp_range *sp_tree_range(sp_tree_node *n)
{
    return n ? (sp_range *)((char *)n - offsetof(sp_range, node)) : NULL;
}

static int node_height(const sp_tree_node *n)
{
    return n ? n->height : 0;
}

static void node_fix_height(sp_tree_node *n)
{
    int hl = node_height(n->left), hr = node_height(n->right);

    n->height = (hl > hr ? hl : hr) + 1;
}

/* Makes `repl` take `old`'s place under `parent` (or as the root). */
static void replace_child(sp_tree_node *parent, sp_tree_node *old, sp_tree_node *repl)
{
    if (parent == NULL)
        g_root = repl;
    else if (parent->left == old)
        parent->left = repl;
    else
        parent->right = repl;
}

/* Rotates x down to its right (right 1: its left child takes its place)
 * or to its left (right 0: its right child does). Returns that child. */
static sp_tree_node *rotate(sp_tree_node *x, int right)
{
    sp_tree_node **xin = right ? &x->left : &x->right;
    sp_tree_node *y = *xin;
    sp_tree_node **yout = right ? &y->right : &y->left;

    *xin = *yout;
    if (*yout)
        (*yout)->parent = x;
    y->parent = x->parent;
    replace_child(x->parent, x, y);
    *yout = x;
    x->parent = y;
    node_fix_height(x);
    node_fix_height(y);
    return y;
}

static sp_tree_node *rotate_right(sp_tree_node *x) { return rotate(x, 1); }
static sp_tree_node *rotate_left(sp_tree_node *x) { return rotate(x, 0); }

/* Restores heights and balance from n up to the root. */
static void tree_rebalance(sp_tree_node *n)
{
    while (n) {
        int bal = node_height(n->left) - node_height(n->right);

        if (bal > 1) {
            if (node_height(n->left->left) < node_height(n->left->right))
                rotate_left(n->left);
            n = rotate_right(n);
        } else if (bal < -1) {
            if (node_height(n->right->right) < node_height(n->right->left))
                rotate_right(n->right);
            n = rotate_left(n);
        } else {
            node_fix_height(n);
        }
        n = n->parent;
    }
}

/* The caller has checked that no range with this base exists. */
void sp_tree_insert(sp_range *r)
{
    sp_tree_node *parent = NULL, **link = &g_root;

    while (*link) {
        parent = *link;
        link = r->base < sp_tree_range(parent)->base ? &parent->left : &parent->right;
    }
    r->node.left = r->node.right = NULL;
    r->node.parent = parent;
    r->node.height = 1;
    *link = &r->node;
    tree_rebalance(parent);
}

void sp_tree_remove(sp_tree_node *z)
{
    sp_tree_node *fix;

    if (z->left && z->right) {
        /* Two children: z's successor y (leftmost of the right subtree, no
         * left child) takes z's place in the tree. */
        sp_tree_node *y = z->right;

        while (y->left)
            y = y->left;
        if (y->parent != z) {
            fix = y->parent;
            fix->left = y->right;
            if (y->right)
                y->right->parent = fix;
            y->right = z->right;
            z->right->parent = y;
        } else {
            fix = y;
        }
        y->left = z->left;
        z->left->parent = y;
        y->parent = z->parent;
        replace_child(z->parent, z, y);
        y->height = z->height;
    } else {
        sp_tree_node *x = z->left ? z->left : z->right;

        fix = z->parent;
        if (x)
            x->parent = z->parent;
        replace_child(z->parent, z, x);
    }
    tree_rebalance(fix);
}

/* The range with the greatest base <= addr, or NULL. */
sp_range *sp_tree_floor(uintptr_t addr)
{
    sp_tree_node *n = g_root, *best = NULL;

    while (n) {
        if (sp_tree_range(n)->base <= addr) {
            best = n;
            n = n->right;
        } else {
            n = n->left;
        }
    }
    return sp_tree_range(best);
}

/* The range with the smallest base > addr, or NULL. */
sp_range *sp_tree_above(uintptr_t addr)
{
    sp_tree_node *n = g_root, *best = NULL;

    while (n) {
        if (sp_tree_range(n)->base > addr) {
            best = n;
            n = n->left;
        } else {
            n = n->right;
        }
    }
    return sp_tree_range(best);
}

sp_tree_node *sp_tree_first(void)
{
    sp_tree_node *n = g_root;

    while (n && n->left)
        n = n->left;
    return n;
}

sp_tree_node *sp_tree_next(sp_tree_node *n)
{
    if (n->right) {
        n = n->right;
        while (n->left)
            n = n->left;
        return n;
    }
    while (n->parent && n->parent->right == n)
        n = n->parent;
    return n->parent;
}

void sp_tree_reset(void) { g_root = NULL; }

/* Returns the height of the subtree at n, or a negative code if it is
 * broken. Depth is bounded so that a broken tree cannot blow the stack. */
static int check_subtree(const sp_tree_node *n, const sp_tree_node *parent,
                         int depth, size_t *count)
{
    int hl, hr;

    if (n == NULL)
        return 0;
    if (depth > 128)
        return -1;                    /* far deeper than any AVL tree */
    if (n->parent != parent)
        return -2;
    hl = check_subtree(n->left, n, depth + 1, count);
    if (hl < 0)
        return hl;
    hr = check_subtree(n->right, n, depth + 1, count);
    if (hr < 0)
        return hr;
    if (hl - hr > 1 || hr - hl > 1)
        return -3;
    if (n->height != (hl > hr ? hl : hr) + 1)
        return -4;
    ++*count;
    return n->height;
}

int sp_tree_check(size_t *count)
{
    return check_subtree(g_root, NULL, 0, count);
}
