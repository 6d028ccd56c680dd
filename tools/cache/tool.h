/* asyncrt-cache: see README.md. Each subcommand lives in its own cmd_*.c and
 * is one row of the table in commands.c. */
#ifndef ASYNCRT_CACHE_TOOL_H
#define ASYNCRT_CACHE_TOOL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "../common/tool.h" /* the four tools' exit codes, --version, JSON strings */
#include "asyncrt/cache.h"
#include "asyncrt/runtime.h"

/* The door: main opens the cache directory once (asyncrt_cache_dir_open)
 * and the library judges what it opened; every command reads, writes and
 * deletes through that handle (and contexts that use it), never through the
 * name again, so a folder swapped in at that name is never touched. */
typedef struct cache_tool {
    asyncrt_context *ctx;     /* the environment's settings and remote; the door's messages */
    asyncrt_cache_dir *cache; /* the door: opened once (O_DIRECTORY | O_NOFOLLOW) */
    const char *dir;          /* the cache directory's name: for messages only */
    bool shared;              /* ASYNCRT_CACHE_SHARED=1 */
    uint64_t cap;             /* ASYNCRT_CACHE_MAX_BYTES as the library reads it */
    bool cap_malformed;       /* it was set but is not a size: the default applies */
    bool trusted;             /* passed the library's trust checks */
    bool json;                /* --json: one document on stdout */
    bool quiet;               /* --quiet: no status line on a terminal (warm: and only failures) */
    char why[512];            /* why not, when !trusted */
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

/* Checks `name` of folder with the library's checks (asyncrt_cache_dir_check):
 * true with *item, or false with why (the library's message). */
bool cache_check(cache_tool *tool, asyncrt_cache_dir *folder, const char *name, asyncrt_cache_dir_item *item,
                 char *why, size_t size);

/* A folder's listing as an array of files, with its totals. */
typedef struct cache_files {
    asyncrt_cache_dir_listing *listing; /* the names live as long as it */
    asyncrt_cache_dir_file *files;      /* malloc'd */
    size_t count;
    asyncrt_cache_dir_totals totals;
} cache_files;
/* False when it cannot be read (the library's message on the tool's context). */
bool cache_list(asyncrt_cache_dir *folder, cache_files *out);
void cache_files_free(cache_files *f);

/* The tool's context with the door as its disk cache (push, pull); false
 * (said, as cmd's failure) when it cannot be. */
bool cache_use_door(cache_tool *tool, const char *cmd);

/* Another folder a command reads or writes (export's OUT, import's IN),
 * opened once like the cache (O_DIRECTORY | O_NOFOLLOW; created 0700 first
 * when `create`), to be used through the handle only. NULL with why. */
asyncrt_cache_dir *tool_open_folder(cache_tool *tool, const char *path, bool create, char *why, size_t size);

/* The remote cache's lines of stats (cmd_remote.c): text, or with --json
 * a "remote" member of the open object. */
void cache_remote_stats(const cache_tool *tool);

/* Shared helpers (common.c). */
bool tool_wants_help(int argc, char **argv);
void tool_format_bytes(uint64_t bytes, char *out, size_t size);
void tool_format_age(double seconds, char *out, size_t size);
double tool_age_seconds(int64_t ns); /* since a time in ns since the epoch */
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
/* The exit code of a command that showed the directory (stats, list): 0, or
 * 7 (not trusted) for one the library would not use (main said why). */
int cache_shown_code(const cache_tool *tool);

#endif
