/* asyncrt-cache: see README.md. Each subcommand lives in its own cmd_*.c and
 * is one row of the table in commands.c. */
#ifndef ASYNCRT_CACHE_TOOL_H
#define ASYNCRT_CACHE_TOOL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

enum {
    TOOL_OK = 0,
    TOOL_PROBLEM = 1,   /* verify found bad files; a file could not be deleted */
    TOOL_USAGE = 2,
    TOOL_NO_CACHE = 3,  /* no usable cache directory (missing, unreadable, untrusted, caching off) */
    TOOL_NO_GPU = 4,    /* warm --arch auto/all on a machine without a usable GPU */
};

typedef struct cache_tool {
    const char *dir;      /* the cache directory */
    bool shared;          /* ASYNCRT_CACHE_SHARED=1 */
    bool trusted;         /* passed the library's trust checks */
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

/* Shared helpers (common.c). */
bool tool_wants_help(int argc, char **argv);
bool tool_key_from_name(const char *name, uint8_t key[32]);
void tool_format_bytes(uint64_t bytes, char *out, size_t size);
void tool_format_age(double seconds, char *out, size_t size);
double tool_age_seconds(const struct timespec *t);
int tool_usage_error(const cache_command *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
