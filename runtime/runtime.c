/*
 * runtime.c - the faces' tables (runtime.h): a slot each, and the empty
 * table of a slot no face took.
 */
#include "runtime.h"

#include "diag.h"

#include <stddef.h>

static int absent(void) { return 0; }
static void no_mode(int *mode) { (void)mode; }
static int no_place(void **place) { (void)place; return -1; }

static const sp_rt_ops none = {
    .name = "none",
    .call_prefix = "",
    .whose = "the runtime's",
    .register_name = "register",
    .unregister_name = "unregister",
    .free_name = "free",
    .err_gone = -1,
    .present = absent,
    .exchange_mode = no_mode,
    .get_place = no_place,
};

const sp_rt_ops *sp_rt_table[SP_RT_MAX] = {&none, &none, &none, &none};

void sp_rt_register(int rt, const sp_rt_ops *ops)
{
    if (rt < 0 || rt >= SP_RT_MAX || !ops)
        return;
    __atomic_store_n(&sp_rt_table[rt], ops, __ATOMIC_RELEASE);
    sp_diag_runtime_name(rt, ops->name, ops->call_prefix, ops->hazard_bare);
}

int sp_rt_any_present(void)
{
    for (int rt = 0; rt < SP_RT_MAX; rt++)
        if (sp_rt(rt)->present())
            return 1;
    return 0;
}
