/* The state asyncrt-run's option parser shares between its files (cli.c, the
 * option loop; cli_<family>.c, one option family each). Private to them:
 * everything else uses cli.h. */
#ifndef ASYNCRT_RUN_CLI_PARSER_H
#define ASYNCRT_RUN_CLI_PARSER_H

#include "cli.h"

typedef struct run_cli_parser {
    run_cli *cli;
    char *err;
    size_t err_size;
    /* Names referenced before their definitions; resolved at the end. */
    char arg_ref[RUN_MAX_LAUNCHES][RUN_MAX_ITEMS][RUN_NAME_MAX];
    char tmap_buffer[RUN_MAX_ITEMS][RUN_NAME_MAX];
    char out_ref[RUN_MAX_ITEMS][RUN_NAME_MAX];
    char expect_ref[RUN_MAX_ITEMS][RUN_NAME_MAX];
    bool warmup_given, batch_given;
    bool device_given;    /* --device, which --devices all excludes */
} run_cli_parser;

/* Writes the message into the caller's buffer; always returns false, so that
 * a parser ends with `return run_cli_fail(p, ...)`. */
bool run_cli_fail(run_cli_parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The launch the options apply to: the last --then group. */
static inline run_launch_spec *run_cli_launch(run_cli_parser *p)
{
    return &p->cli->launches[p->cli->launch_count - 1];
}

/* ---- value parsers (cli_values.c); false on anything malformed ---------- */

/* A finite number, the whole text. */
bool run_cli_parse_double(const char *text, double *out);
/* A list of 1..max unsigned integers in [lo, hi] separated by any of seps. */
bool run_cli_parse_list(const char *text, size_t len, const char *seps, uint64_t *out, int max, int *count,
                        uint64_t lo, uint64_t hi);
/* An identifier of at most RUN_NAME_MAX - 1 characters, copied to out; the
 * message names the option (what). */
bool run_cli_take_name(run_cli_parser *p, const char *what, const char *text, size_t len, char *out);

/* ---- the option families: one spec each, appended to p->cli ------------- */

bool run_cli_parse_buffer(run_cli_parser *p, const char *spec); /* cli_buffer.c */
bool run_cli_parse_arg(run_cli_parser *p, const char *spec);    /* cli_arg.c, into the current launch */
bool run_cli_parse_tmap(run_cli_parser *p, const char *spec);   /* cli_tmap.c */
/* --out or --expect (opt), into list[*count]; the buffer's name into names
 * for the resolution at the end (cli_files.c). */
bool run_cli_parse_file_ref(run_cli_parser *p, const char *opt, const char *spec, run_file_ref *list,
                            size_t *count, char names[][RUN_NAME_MAX]);
/* After resolution: no --out overwrites an --expect reference or another --out. */
bool run_cli_check_files(run_cli_parser *p);

#endif
