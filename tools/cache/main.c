/* asyncrt-cache: look at and manage asyncrt's on-disk program cache. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "asyncrt/asyncrt.h"
#include "cache_trust.h"
#include "tool.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: asyncrt-cache [--dir DIR] COMMAND [options]\n"
                 "\n"
                 "Looks at and manages asyncrt's on-disk program cache: by default the directory\n"
                 "the library uses ($ASYNCRT_CACHE_DIR, else $XDG_CACHE_HOME/asyncrt, else\n"
                 "~/.cache/asyncrt); ASYNCRT_CACHE_SHARED=1 for a shared team cache.\n"
                 "\n"
                 "commands:\n");
    for (const cache_command *const *c = cache_commands; *c; c++) fprintf(out, "  %-8s %s\n", (*c)->name, (*c)->summary);
    fprintf(out, "\n"
                 "  --dir DIR   the cache directory to use\n"
                 "  -h, --help  this text; COMMAND --help for a command's\n"
                 "\n"
                 "exit codes:\n"
                 "  0  success\n"
                 "  1  verify found damaged or foreign files, or a file could not be deleted;\n"
                 "     warm: a build failed; export/import: an entry was refused or not written\n"
                 "  2  bad usage\n"
                 "  3  no usable cache directory (missing, unreadable, not trusted, or caching off)\n"
                 "  4  warm: --arch auto or all, and no usable GPU\n");
}

/* The library's default directory, via a context (no driver is touched). */
static char *default_dir(void)
{
    asyncrt_context *ctx = NULL;
    if (asyncrt_context_create(&ctx) != ASYNCRT_SUCCESS) return NULL;
    const char *dir = asyncrt_context_cache_dir(ctx);
    char *copy = dir ? strdup(dir) : NULL;
    asyncrt_context_destroy(ctx);
    return copy;
}

int main(int argc, char **argv)
{
    const char *dir_arg = NULL;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return TOOL_OK;
        }
        if (!strcmp(argv[i], "--dir") && i + 1 < argc && argv[i + 1][0]) {
            dir_arg = argv[++i];
        } else {
            fprintf(stderr, "asyncrt-cache: unknown option or missing value: %s\n\n", argv[i]);
            usage(stderr);
            return TOOL_USAGE;
        }
    }
    if (i >= argc) {
        fprintf(stderr, "asyncrt-cache: no command given\n\n");
        usage(stderr);
        return TOOL_USAGE;
    }
    const cache_command *cmd = NULL;
    for (const cache_command *const *c = cache_commands; *c && !cmd; c++)
        if (!strcmp((*c)->name, argv[i])) cmd = *c;
    if (!cmd) {
        fprintf(stderr, "asyncrt-cache: unknown command \"%s\"\n\n", argv[i]);
        usage(stderr);
        return TOOL_USAGE;
    }
    if (tool_wants_help(argc - i, argv + i)) {
        fputs(cmd->usage, stdout);
        return TOOL_OK;
    }

    char *dir = dir_arg ? strdup(dir_arg) : default_dir();
    if (!dir) {
        fprintf(stderr, "asyncrt-cache: no cache directory: caching is off (ASYNCRT_CACHE=0) or HOME is unset; "
                        "use --dir\n");
        return TOOL_NO_CACHE;
    }
    struct stat st;
    if (lstat(dir, &st) != 0 && !tool_command_fills_cache(cmd)) { /* those are created by the trust check below */
        fprintf(stderr, "asyncrt-cache: no cache directory at %s\n", dir);
        free(dir);
        return TOOL_NO_CACHE;
    }
    const char *shared = getenv("ASYNCRT_CACHE_SHARED");
    cache_tool tool = {.dir = dir, .shared = shared && !strcmp(shared, "1")};
    tool.trusted = asyncrt__cache_trust_dir(dir, tool.shared, tool.mac_key, tool.why, sizeof tool.why);
    int rc;
    if (!tool.trusted && cmd->needs_trust) {
        fprintf(stderr, "asyncrt-cache %s: the library would not use this directory: %s\n", cmd->name, tool.why);
        rc = TOOL_NO_CACHE;
    } else {
        if (!tool.trusted) fprintf(stderr, "asyncrt-cache: note: the library does not use this directory: %s\n", tool.why);
        rc = cmd->run(&tool, argc - i, argv + i);
    }
    free(dir);
    return rc;
}
