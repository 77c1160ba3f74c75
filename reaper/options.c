/*
 * options.c - the options table and its parser.
 */
#include "options.h"
#include "diag.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

sp_options sp_opt;

typedef struct opt_desc {
    const char *name;
    int is_int;
    const char *def;
    const char *desc;
    size_t offset;
} opt_desc;

#define SP_OPT_ISINT_INT 1
#define SP_OPT_ISINT_STR 0
#define SP_OPT(type, name, def, desc) \
    {#name, SP_OPT_ISINT_##type, #def, desc, offsetof(sp_options, name)},
static const opt_desc opt_table[] = {
#include "options.inc"
};
#undef SP_OPT

#define OPT_COUNT (sizeof(opt_table) / sizeof(opt_table[0]))

static void set_default(const opt_desc *d)
{
    char *field = (char *)&sp_opt + d->offset;
    if (d->is_int) {
        *(long *)field = strtol(d->def, NULL, 0);
    } else {
        /* def is a stringized string literal: strip the quotes. */
        size_t n = strlen(d->def);
        size_t len = n >= 2 ? n - 2 : 0;
        if (len >= SP_OPT_STR_MAX)
            len = SP_OPT_STR_MAX - 1;
        memcpy(field, d->def + 1, len);
        field[len] = '\0';
    }
}

static int level_from_name(const char *s)
{
    if (strcmp(s, "error") == 0)
        return SP_LOG_ERROR;
    if (strcmp(s, "warn") == 0)
        return SP_LOG_WARN;
    if (strcmp(s, "info") == 0)
        return SP_LOG_INFO;
    if (strcmp(s, "debug") == 0)
        return SP_LOG_DEBUG;
    return -1;
}

static int apply(const char *key, size_t klen, const char *val, size_t vlen)
{
    for (size_t i = 0; i < OPT_COUNT; i++) {
        const opt_desc *d = &opt_table[i];
        if (strlen(d->name) != klen || strncmp(d->name, key, klen) != 0)
            continue;
        char *field = (char *)&sp_opt + d->offset;
        char buf[SP_OPT_STR_MAX];
        if (vlen >= sizeof(buf)) {
            sp_log(SP_LOG_WARN, "options", "value of '%.*s' too long, ignored", (int)klen, key);
            return 1;
        }
        memcpy(buf, val, vlen);
        buf[vlen] = '\0';
        if (d->is_int) {
            char *end = NULL;
            errno = 0;
            long v = strtol(buf, &end, 0);
            if (vlen == 0 || errno || *end) {
                sp_log(SP_LOG_WARN, "options", "malformed value '%s' for '%s', keeping %ld",
                       buf, d->name, *(long *)field);
                return 1;
            }
            *(long *)field = v;
        } else {
            if (strcmp(d->name, "log") == 0 && level_from_name(buf) < 0) {
                sp_log(SP_LOG_WARN, "options", "unknown log level '%s', keeping '%s'", buf,
                       sp_opt.log);
                return 1;
            }
            memcpy(field, buf, vlen + 1);
        }
        return 0;
    }
    sp_log(SP_LOG_WARN, "options", "unknown option '%.*s' ignored", (int)klen, key);
    return 1;
}

int sp_options_parse(const char *spec)
{
    int problems = 0;
    for (size_t i = 0; i < OPT_COUNT; i++)
        set_default(&opt_table[i]);
    sp_opt.log_level = SP_LOG_WARN;
    if (spec) {
        const char *p = spec;
        while (*p) {
            const char *end = strpbrk(p, ":,");
            size_t len = end ? (size_t)(end - p) : strlen(p);
            if (len > 0) {
                const char *eq = memchr(p, '=', len);
                if (!eq) {
                    sp_log(SP_LOG_WARN, "options", "malformed option '%.*s' (want key=value)",
                           (int)len, p);
                    problems++;
                } else {
                    problems += apply(p, (size_t)(eq - p), eq + 1, len - (size_t)(eq - p) - 1);
                }
            }
            if (!end)
                break;
            p = end + 1;
        }
    }
    int lvl = level_from_name(sp_opt.log);
    sp_opt.log_level = lvl < 0 ? SP_LOG_WARN : lvl;
    if (sp_opt.backtrace < 0)
        sp_opt.backtrace = 0;
    if (sp_opt.backtrace > 64)
        sp_opt.backtrace = 64;
    if (sp_opt.drain_timeout_ms < 0)
        sp_opt.drain_timeout_ms = 0;
    return problems;
}

void sp_options_print(void)
{
    for (size_t i = 0; i < OPT_COUNT; i++) {
        const opt_desc *d = &opt_table[i];
        const char *field = (const char *)&sp_opt + d->offset;
        if (d->is_int)
            sp_log(SP_LOG_ERROR, "options", "%s=%ld  (%s)", d->name, *(const long *)field, d->desc);
        else
            sp_log(SP_LOG_ERROR, "options", "%s=%s  (%s)", d->name, field, d->desc);
    }
}
