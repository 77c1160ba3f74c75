/*
 * options_fuzz.c - libFuzzer target for SAFEPIN_OPTIONS parsing
 * (diag/options.c), built with clang: make fuzz-options.
 *
 * For any input (made a C string), sp_options_parse must not crash or read
 * out of bounds (ASan, UBSan), and the options it leaves must be valid:
 *  - every INT option within its [min, max], every ENUM option one of its
 *    words (log_level, unreg_mode and leak_mode derived from them), every
 *    STR option a terminated string shorter than SP_OPT_STR_MAX, every LIST
 *    option one shorter than SP_OPT_LIST_MAX;
 *  - parsing is a function of the spec: the same spec twice, the same
 *    options;
 *  - the options written back as "k=v:k=v..." parse with no problem to the
 *    same options (round trip; the derived unreg_mode only where the old
 *    sync_unregister spelling did not decide it).
 * A broken invariant aborts, which libFuzzer reports with the input.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "options.h"

/* options.c reports through sp_log: format it (checks the arguments). */
void sp_log(int level, const char *code, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    (void)level;
    (void)code;
}

#define FAIL(...) (fprintf(stderr, "options_fuzz: " __VA_ARGS__), fputc('\n', stderr), abort())

static void check_valid(void)
{
#define SP_OPT_INT(name, lo, hi)                                                   \
    if (sp_opt.name < (long)(lo) || sp_opt.name > (long)(hi))                      \
        FAIL("%s=%ld outside [%ld, %ld]", #name, sp_opt.name, (long)(lo), (long)(hi));
#define SP_OPT_STR(name, lo, hi)                                                   \
    if (!memchr(sp_opt.name, 0, SP_OPT_STR_MAX))                                   \
        FAIL("%s is not terminated", #name);
#define SP_OPT_ENUM(name, lo, hi) SP_OPT_STR(name, lo, hi)
#define SP_OPT_LIST(name, lo, hi)                                                  \
    if (!memchr(sp_opt.name, 0, SP_OPT_LIST_MAX))                                  \
        FAIL("%s is not terminated", #name);
#define SP_OPT(type, name, def, lo, hi, desc) SP_OPT_##type(name, lo, hi)
#include "options.inc"
#undef SP_OPT
#undef SP_OPT_INT
#undef SP_OPT_STR
#undef SP_OPT_ENUM
#undef SP_OPT_LIST
    if (sp_opt.log_level < SP_LOG_ERROR || sp_opt.log_level > SP_LOG_DEBUG)
        FAIL("log=%s gives log_level %d", sp_opt.log, sp_opt.log_level);
    if (sp_opt.unreg_mode < SP_UNREG_ORDERED || sp_opt.unreg_mode > SP_UNREG_SYNC)
        FAIL("unregister=%s gives unreg_mode %d", sp_opt.unregister, sp_opt.unreg_mode);
    if (sp_opt.leak_mode < SP_LEAK_STRICT || sp_opt.leak_mode > SP_LEAK_OFF)
        FAIL("leak_check=%s gives leak_mode %d", sp_opt.leak_check, sp_opt.leak_mode);
}

/* Field by field (string fields up to their terminator). */
static int same(const sp_options *a, const sp_options *b)
{
#define SP_OPT_INT(name) if (a->name != b->name) return 0;
#define SP_OPT_STR(name) if (strcmp(a->name, b->name) != 0) return 0;
#define SP_OPT_ENUM(name) SP_OPT_STR(name)
#define SP_OPT_LIST(name) SP_OPT_STR(name)
#define SP_OPT(type, name, def, lo, hi, desc) SP_OPT_##type(name)
#include "options.inc"
#undef SP_OPT
#undef SP_OPT_INT
#undef SP_OPT_STR
#undef SP_OPT_ENUM
#undef SP_OPT_LIST
    return a->log_level == b->log_level && a->unreg_mode == b->unreg_mode &&
           a->leak_mode == b->leak_mode;
}

/* The options as a spec: every option, k=v, ':'-separated. */
static size_t write_back(char *out, size_t n)
{
    size_t len = 0;
#define PUT(...) (len += (size_t)snprintf(out + len, len < n ? n - len : 0, __VA_ARGS__))
#define SP_OPT_INT(name) PUT("%s=%ld:", #name, sp_opt.name);
#define SP_OPT_STR(name) PUT("%s=%s:", #name, sp_opt.name);
#define SP_OPT_ENUM(name) SP_OPT_STR(name)
/* A list's values, '\n' between them, as one value: it parses back to the same. */
#define SP_OPT_LIST(name) if (sp_opt.name[0]) PUT("%s=%s:", #name, sp_opt.name);
#define SP_OPT(type, name, def, lo, hi, desc) SP_OPT_##type(name)
#include "options.inc"
#undef SP_OPT
#undef SP_OPT_INT
#undef SP_OPT_STR
#undef SP_OPT_ENUM
#undef SP_OPT_LIST
#undef PUT
    return len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *spec = malloc(size + 1);
    if (!spec)
        return 0;
    memcpy(spec, data, size);
    spec[size] = '\0';

    int problems = sp_options_parse(spec);
    if (problems < 0)
        FAIL("negative problem count %d", problems);
    check_valid();
    sp_options first = sp_opt;

    if (sp_options_parse(spec) != problems || !same(&first, &sp_opt))
        FAIL("the same spec parsed twice gave different options");

    static char back[64 * 1024];
    if (write_back(back, sizeof back) < sizeof back) {
        int p2 = sp_options_parse(back);
        if (p2 != 0)
            FAIL("written-back options had %d problems: %s", p2, back);
        check_valid();
        int decided_by_old = first.sync_unregister && first.unreg_mode == SP_UNREG_SYNC;
        if (decided_by_old)
            sp_opt.unreg_mode = first.unreg_mode;
        if (!same(&first, &sp_opt))
            FAIL("written-back options differ: %s", back);
    }
    free(spec);
    return 0;
}
