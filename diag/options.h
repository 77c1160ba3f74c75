/*
 * options.h - SAFEPIN_OPTIONS, parsed once (sanitizer style).
 */
#ifndef SAFEPIN_OPTIONS_H
#define SAFEPIN_OPTIONS_H

#ifdef __cplusplus
extern "C" {
#endif

#define SP_OPT_STR_MAX 256
#define SP_OPT_LIST_MAX 4096

/* options.inc's SP_OPT_WORDS lines (an ENUM option's words) say nothing to
 * an includer that does not define them itself (options.c does). */
#ifndef SP_OPT_WORDS
#define SP_OPT_WORDS(name, ...)
#endif

typedef struct sp_options {
#define SP_OPT_INT(name) long name;
#define SP_OPT_STR(name) char name[SP_OPT_STR_MAX];
#define SP_OPT_ENUM(name) char name[SP_OPT_STR_MAX];
#define SP_OPT_LIST(name) char name[SP_OPT_LIST_MAX];
#define SP_OPT(type, name, def, lo, hi, desc) SP_OPT_##type(name)
#include "options.inc"
#undef SP_OPT
#undef SP_OPT_INT
#undef SP_OPT_STR
#undef SP_OPT_ENUM
#undef SP_OPT_LIST
    int log_level;          /* derived from log */
    int unreg_mode;         /* derived from unregister (and sync_unregister) */
    int leak_mode;          /* derived from leak_check */
} sp_options;

enum { SP_LOG_ERROR = 0, SP_LOG_WARN = 1, SP_LOG_INFO = 2, SP_LOG_DEBUG = 3 };

/* unregister=: what hipHostUnregister waits for before it returns. */
enum {
    SP_UNREG_ORDERED = 0, /* the device work enqueued before it (the default) */
    SP_UNREG_ASYNC = 1,   /* nothing */
    SP_UNREG_SYNC = 2,    /* its own release (the real unregister) */
};

/* leak_check=: what a registration still live at exit is. */
enum {
    SP_LEAK_STRICT = 0, /* a violation (the default) */
    SP_LEAK_REPORT = 1, /* printed and counted, not a violation */
    SP_LEAK_OFF = 2,    /* nothing said */
};

extern sp_options sp_opt;

/* Set defaults, then apply spec ("k=v:k=v", may be NULL). Unknown keys and
 * malformed values are reported once each through sp_log, with what is
 * accepted and the nearest key or word, and ignored; never fatal.
 * Returns the number of problems found. */
int sp_options_parse(const char *spec);

/* The problems the last sp_options_parse found: strict mode fails a run
 * whose options had any (a misspelled key must not pass CI unseen). */
int sp_options_problems(void);

/* Print the effective options (log=debug does this at start-up). */
void sp_options_print(void);

#ifdef __cplusplus
}
#endif
#endif
