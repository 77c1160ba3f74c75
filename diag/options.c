/*
 * options.c - the options table and its parser.
 */
#include "options.h"
#include "diag.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

sp_options sp_opt;

enum opt_type { OPT_INT, OPT_STR, OPT_ENUM, OPT_LIST };

typedef struct opt_desc {
    const char *name;
    enum opt_type type;
    const char *def;
    long lo, hi;
    const char *desc;
    size_t offset;
} opt_desc;

#define SP_OPT(type, name, def, lo, hi, desc) \
    {#name, OPT_##type, #def, (long)(lo), (long)(hi), desc, offsetof(sp_options, name)},
static const opt_desc opt_table[] = {
#include "options.inc"
};
#undef SP_OPT

#define OPT_COUNT (sizeof(opt_table) / sizeof(opt_table[0]))

/* The words an ENUM option accepts (options.inc's SP_OPT_WORDS lines);
 * index = the derived value. */
#undef SP_OPT_WORDS
#define SP_OPT(type, name, def, lo, hi, desc)
#define SP_OPT_WORDS(name, ...) static const char *const name##_words[] = {__VA_ARGS__, NULL};
#include "options.inc"
#undef SP_OPT_WORDS

static const struct {
    const char *name;
    const char *const *words;
} enum_table[] = {
#define SP_OPT_WORDS(name, ...) {#name, name##_words},
#include "options.inc"
#undef SP_OPT_WORDS
};
#undef SP_OPT

/* Every key, for the nearest one to an unknown key. */
static const char *const key_names[] = {
#define SP_OPT(type, name, def, lo, hi, desc) #name,
#define SP_OPT_WORDS(name, ...)
#include "options.inc"
#undef SP_OPT_WORDS
#undef SP_OPT
    NULL};

/* The problems the last parse found (sp_options_problems); whether it has
 * listed the keys (with its first unknown key). */
static int parse_problems;
static int keys_listed;

static const char *const *enum_words(const opt_desc *d)
{
    for (size_t i = 0; i < sizeof(enum_table) / sizeof(enum_table[0]); i++)
        if (strcmp(enum_table[i].name, d->name) == 0)
            return enum_table[i].words;
    return NULL;
}

/* A typo's usual forms: a letter added, dropped, changed, or two neighbours
 * swapped ('strcit'), each one edit; case, and '-' for '_', are none
 * ('leak-check' is 'leak_check'). */
#define NEAR_MAX 64
static char fold(char c)
{
    c = (char)tolower((unsigned char)c);
    return c == '-' ? '_' : c;
}

/* The edits between a (n chars) and b (m chars), both at most NEAR_MAX: the
 * optimal string alignment distance, three rows at a time (a small stack:
 * options may be parsed on a program thread). */
static size_t edits(const char *a, size_t n, const char *b, size_t m)
{
    size_t rows[3][NEAR_MAX + 1];
    size_t *back2 = rows[0], *back = rows[1], *cur = rows[2];
    for (size_t j = 0; j <= m; j++)
        back[j] = j;
    for (size_t i = 1; i <= n; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= m; j++) {
            size_t v = back[j - 1] + (fold(a[i - 1]) != fold(b[j - 1]));
            if (back[j] + 1 < v)
                v = back[j] + 1;
            if (cur[j - 1] + 1 < v)
                v = cur[j - 1] + 1;
            if (i > 1 && j > 1 && fold(a[i - 1]) == fold(b[j - 2]) &&
                fold(a[i - 2]) == fold(b[j - 1]) && back2[j - 2] + 1 < v)
                v = back2[j - 2] + 1;
            cur[j] = v;
        }
        size_t *t = back2;
        back2 = back;
        back = cur;
        cur = t;
    }
    return back[m];
}

/* The word of words nearest to s (n chars), or NULL when none is near
 * enough to be a typo of it: at most 2 edits, and at most a third of the
 * longer of the two ('lgo' is 'log', 'foo' is nothing). */
static const char *nearest(const char *s, size_t n, const char *const *words)
{
    const char *best = NULL;
    size_t best_d = 3;
    if (n > NEAR_MAX)
        return NULL;
    for (int i = 0; words && words[i]; i++) {
        size_t m = strlen(words[i]);
        if (m > NEAR_MAX)
            continue;
        size_t d = edits(s, n, words[i], m);
        if (d < best_d && d * 3 <= (n > m ? n : m)) {
            best = words[i];
            best_d = d;
        }
    }
    return best;
}

static int enum_index(const char *const *words, const char *s)
{
    for (int i = 0; words && words[i]; i++)
        if (strcmp(words[i], s) == 0)
            return i;
    return -1;
}

static void set_default(const opt_desc *d)
{
    char *field = (char *)&sp_opt + d->offset;
    if (d->type == OPT_INT) {
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

/* "error, warn, info or debug" into buf (last: the word before the last
 * one, " or " or ", "). */
static const char *word_list(const char *const *words, char *buf, size_t n, const char *last)
{
    buf[0] = '\0';
    size_t used = 0;
    for (int i = 0; words[i] && used < n; i++) {
        const char *sep = i == 0 ? "" : words[i + 1] ? ", " : last;
        int w = snprintf(buf + used, n - used, "%s%s", sep, words[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    return buf;
}

static void print_default(const opt_desc *d, char *buf, size_t n)
{
    size_t len = strlen(d->def);
    if (d->type == OPT_INT || len < 2)
        snprintf(buf, n, "%s", d->def);
    else
        snprintf(buf, n, "%.*s", (int)(len - 2), d->def + 1);
}

static int apply(const char *key, size_t klen, const char *val, size_t vlen)
{
    for (size_t i = 0; i < OPT_COUNT; i++) {
        const opt_desc *d = &opt_table[i];
        if (strlen(d->name) != klen || strncmp(d->name, key, klen) != 0)
            continue;
        char *field = (char *)&sp_opt + d->offset;
        if (d->type == OPT_LIST) {
            /* Each value is added to those given before ('\n' between). */
            size_t used = strlen(field), sep = used && vlen ? 1 : 0;
            if (used + sep + vlen >= SP_OPT_LIST_MAX) {
                sp_log(SP_LOG_WARN, "options", "'%s=%.*s' ignored: the values of '%s' exceed %d characters in all",
                       d->name, (int)vlen, val, d->name, SP_OPT_LIST_MAX - 1);
                return 1;
            }
            if (sep)
                field[used++] = '\n';
            memcpy(field + used, val, vlen);
            field[used + vlen] = '\0';
            return 0;
        }
        char buf[SP_OPT_STR_MAX], def[SP_OPT_STR_MAX];
        print_default(d, def, sizeof(def));
        if (vlen >= sizeof(buf)) {
            sp_log(SP_LOG_WARN, "options", "value of '%s' too long (at most %d characters), keeping %s",
                   d->name, SP_OPT_STR_MAX - 1, def);
            return 1;
        }
        memcpy(buf, val, vlen);
        buf[vlen] = '\0';
        if (d->type == OPT_INT) {
            char *end = NULL;
            errno = 0;
            long v = strtol(buf, &end, 0);
            if (vlen == 0 || errno || *end || v < d->lo || v > d->hi) {
                sp_log(SP_LOG_WARN, "options",
                       "%s value '%s' for '%s' (accepted: an integer from %ld to %ld), keeping %s",
                       vlen == 0 || (errno && errno != ERANGE) || *end ? "malformed" : "out-of-range",
                       buf, d->name, d->lo, d->hi, def);
                return 1;
            }
            *(long *)field = v;
        } else if (d->type == OPT_ENUM) {
            const char *const *words = enum_words(d);
            if (enum_index(words, buf) < 0) {
                char list[128];
                const char *near = nearest(buf, vlen, words);
                sp_log(SP_LOG_WARN, "options", "unknown value '%s' for '%s'%s%s%s (accepted: %s), keeping %s",
                       buf, d->name, near ? ": did you mean '" : "", near ? near : "", near ? "'?" : "",
                       word_list(words, list, sizeof(list), " or "), def);
                return 1;
            }
            memcpy(field, buf, vlen + 1);
        } else {
            memcpy(field, buf, vlen + 1);
        }
        return 0;
    }
    /* The keys: with the first unknown one of a parse (parsing runs once,
     * under safepin's init, or in a test with safepin's lock held). */
    static char keys[1024];
    if (!keys[0])
        word_list(key_names, keys, sizeof(keys), ", ");
    const char *near = nearest(key, klen, key_names);
    sp_log(SP_LOG_WARN, "options", "unknown option '%.*s' ignored%s%s%s (accepted keys: %s)",
           klen > NEAR_MAX ? NEAR_MAX : (int)klen, key, near ? ": did you mean '" : "", near ? near : "",
           near ? "'?" : "", keys_listed ? "as above" : keys);
    keys_listed = 1;
    return 1;
}

int sp_options_parse(const char *spec)
{
    int problems = 0;
    for (size_t i = 0; i < OPT_COUNT; i++)
        set_default(&opt_table[i]);
    sp_opt.log_level = SP_LOG_WARN;
    keys_listed = 0;
    int unregister_given = 0;
    if (spec) {
        const char *p = spec;
        while (*p) {
            const char *end = strchr(p, ':');
            size_t len = end ? (size_t)(end - p) : strlen(p);
            if (len > 0) {
                const char *eq = memchr(p, '=', len);
                if (!eq) {
                    sp_log(SP_LOG_WARN, "options", "malformed option '%.*s' (want key=value)",
                           (int)len, p);
                    problems++;
                } else {
                    size_t klen = (size_t)(eq - p);
                    int bad = apply(p, klen, eq + 1, len - klen - 1);
                    problems += bad;
                    if (!bad && klen == 10 && strncmp(p, "unregister", 10) == 0)
                        unregister_given = 1;
                }
            }
            if (!end)
                break;
            p = end + 1;
        }
    }
    sp_opt.log_level = enum_index(log_words, sp_opt.log);
    sp_opt.unreg_mode = enum_index(unregister_words, sp_opt.unregister);
    sp_opt.leak_mode = enum_index(leak_check_words, sp_opt.leak_check);
    /* The old spelling counts only where the new one was not given. */
    if (sp_opt.sync_unregister && !unregister_given)
        sp_opt.unreg_mode = SP_UNREG_SYNC;
    parse_problems = problems;
    return problems;
}

int sp_options_problems(void) { return parse_problems; }

void sp_options_print(void)
{
    for (size_t i = 0; i < OPT_COUNT; i++) {
        const opt_desc *d = &opt_table[i];
        const char *field = (const char *)&sp_opt + d->offset;
        if (d->type == OPT_INT) {
            sp_log(SP_LOG_ERROR, "options", "%s=%ld  (%s)", d->name, *(const long *)field, d->desc);
        } else if (d->type == OPT_LIST) {
            /* One line per value. */
            const char *p = field;
            do {
                const char *nl = strchr(p, '\n');
                int len = nl ? (int)(nl - p) : (int)strlen(p);
                sp_log(SP_LOG_ERROR, "options", "%s=%.*s  (%s)", d->name, len, p, d->desc);
                p = nl ? nl + 1 : NULL;
            } while (p);
        } else if (d->type == OPT_ENUM) {
            char list[128];
            sp_log(SP_LOG_ERROR, "options", "%s=%s  (%s; %s)", d->name, field, d->desc,
                   word_list(enum_words(d), list, sizeof(list), " or "));
        } else
            sp_log(SP_LOG_ERROR, "options", "%s=%s  (%s)", d->name, field, d->desc);
    }
}
