/* asyncrt-cache: see README.md. Each subcommand lives in its own cmd_*.c and
 * is one row of the table in commands.c. */
#ifndef ASYNCRT_CACHE_TOOL_H
#define ASYNCRT_CACHE_TOOL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "../common/tool.h" /* the four tools' exit codes, --version, JSON strings */
#include "asyncrt/runtime.h"
#include "base_internal.h"    /* asyncrt__format, SHA-256 names, the settings */
#include "cache_internal.h"   /* the directory, its files and their checks, as the library has them */
#include "compile_internal.h" /* the entries' programs */

/* The door: main opens the cache directory once (asyncrt__dir_open_door)
 * and checks what it opened; every command reads, writes and deletes through
 * dir_fd (openat and friends, and contexts that adopt it), never through the
 * name again, so a folder swapped in at that name is never touched. */
typedef struct cache_tool {
    const char *dir;      /* the cache directory's name: for messages only */
    int dir_fd;           /* it, opened once (O_DIRECTORY | O_NOFOLLOW) */
    bool shared;          /* ASYNCRT_CACHE_SHARED=1 */
    uint64_t cap;         /* ASYNCRT_CACHE_MAX_BYTES as the library reads it */
    bool cap_malformed;   /* it was set but is not a size: the default applies */
    bool trusted;         /* passed the library's trust checks */
    bool json;            /* --json: one document on stdout */
    char why[512];        /* why not, when !trusted */
    uint8_t mac_key[32];  /* the shared key, when shared and trusted */
} cache_tool;

typedef struct cache_command {
    const char *name;
    const char *summary;  /* one line for the tool's --help */
    const char *usage;    /* the subcommand's --help text */
    bool needs_trust;     /* refuse to run on an untrusted directory */
    int (*run)(cache_tool *tool, int argc, char **argv); /* argv[0] is the subcommand */
} cache_command;

/* NULL-terminated, in --help order (commands.c). */
extern const cache_command *const cache_commands[];
/* True for the commands that fill the cache (warm, import): for them a
 * missing directory is created (by the trust check) rather than refused. */
bool tool_command_fills_cache(const cache_command *cmd);

/* A verified file, decoded: exactly one of program / manifest is set. */
typedef struct cache_loaded {
    uint8_t key[32];
    asyncrt_program *program;
    asyncrt_manifest manifest;
    bool is_manifest;
} cache_loaded;

/* Reads f->name in the directory dir_fd with the library's checks (regular
 * file, plausible size, name = key, header, digest or, with mac, the team
 * MAC) and decodes it; false with why when the library would refuse it
 * (load.c). */
bool cache_load(int dir_fd, const asyncrt_cache_file *f, const uint8_t *mac, cache_loaded *out, char *why,
                size_t size);
void cache_loaded_free(cache_loaded *l);

/* A context whose disk cache is the tool's door (never reopened by name),
 * with the environment's remote; NULL (said, as cmd's failure) when it
 * cannot be made (load.c). */
asyncrt_context *cache_tool_context(const cache_tool *tool, const char *cmd);

/* Another folder a command reads or writes (export's OUT, import's IN),
 * opened once like the cache (O_DIRECTORY | O_NOFOLLOW; created 0700 first
 * when `create`), to be used through the descriptor only. -1 with why. */
int tool_open_folder(const char *path, bool create, char *why, size_t size);

/* The remote cache's lines of stats (cmd_remote.c): text, or with --json
 * a "remote" member of the open object. */
void cache_remote_stats(const cache_tool *tool);

/* Shared helpers (common.c). */
bool tool_wants_help(int argc, char **argv);
bool tool_key_from_name(const char *name, uint8_t key[32]);
void tool_format_bytes(uint64_t bytes, char *out, size_t size);
void tool_format_age(double seconds, char *out, size_t size);
double tool_age_seconds(const struct timespec *t);
/* "asyncrt-cache CMD: MESSAGE" and the command's usage on stderr; returns TOOL_EXIT_USAGE. */
int cache_usage_error(const cache_command *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "asyncrt-cache CMD: MESSAGE" on stderr and, with --json, the error
 * document on stdout; returns code. */
int cache_fail(const cache_tool *tool, const char *cmd, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A JSON object member: `"name": ` after a comma unless first. */
void cache_json_key(const char *name, bool first);
/* Whether cache_json_key or cache_fail has begun a document on stdout. */
bool cache_json_started(void);

#endif
