/* asyncrt-cache: look at and manage asyncrt's on-disk program cache. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tool.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: asyncrt-cache [--dir DIR] [--json] [--quiet] COMMAND [options]\n"
                 "\n"
                 "Looks at and manages asyncrt's on-disk program cache: by default the directory\n"
                 "the library uses ($ASYNCRT_CACHE_DIR, else $XDG_CACHE_HOME/asyncrt, else\n"
                 "~/.cache/asyncrt); ASYNCRT_CACHE_SHARED=1 for a shared team cache. The\n"
                 "directory is opened once and checked as the library checks it; a command\n"
                 "then uses only what it opened, never the name again.\n"
                 "\n"
                 "commands:\n");
    for (const cache_command *const *c = cache_commands; *c; c++) fprintf(out, "  %-8s %s\n", (*c)->name, (*c)->summary);
    fprintf(out, "\n"
                 "  --dir DIR   the cache directory to use\n"
                 "  --json      one JSON document on stdout instead of text (also after COMMAND;\n"
                 "              keys: tools/cache/README.md); a command that fails prints\n"
                 "              {\"error\": why, \"exit_code\": code}\n"
                 "  --quiet     no status line: on a terminal, warm's compiles that take over\n"
                 "              0.5 s show on stderr what is compiled and the time, one line\n"
                 "              cleared at the end (never on a pipe, nor with ASYNCRT_LOG);\n"
                 "              warm --quiet also prints only failures\n"
                 "  --version   asyncrt-cache, libasyncrt and NVRTC versions\n"
                 "  -h, --help  this text; COMMAND --help for a command's\n"
                 "\n" TOOL_EXIT_CODES_HELP
                 "  asyncrt-cache: 3 = warm: a source did not compile; 4 = warm --arch auto or\n"
                 "  all and no usable GPU; 6 = verify, export or import found damaged or foreign\n"
                 "  files; 7 = no usable cache directory (missing, unreadable, not trusted, caching\n"
                 "  off), or a file could not be read, written or deleted.\n");
}

/* Takes --json out of the command's arguments (up to a "--"), so that it
 * may come before or after COMMAND. */
static int take_json(int argc, char **argv, bool *json)
{
    int kept = 1;
    bool literal = false;
    for (int i = 1; i < argc; i++) {
        if (!literal && !strcmp(argv[i], "--json")) *json = true;
        else argv[kept++] = argv[i];
        literal = literal || !strcmp(argv[i], "--");
    }
    return kept;
}

int main(int argc, char **argv)
{
    const char *dir_arg = NULL;
    bool json = false, quiet = false;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help") || !strcmp(argv[i], "--version")) {
            char version[160];
            tool_version_line("asyncrt-cache", version, sizeof version);
            printf("%s\n", version);
            if (argv[i][2] != 'v') usage(stdout);
            return TOOL_EXIT_OK;
        }
        if (!strcmp(argv[i], "--json")) {
            json = true;
        } else if (!strcmp(argv[i], "--quiet")) {
            quiet = true;
        } else if (!strcmp(argv[i], "--dir")) {
            if (i + 1 >= argc || !argv[i + 1][0]) return tool_usage_error("asyncrt-cache", "--dir needs a value");
            dir_arg = argv[++i];
        } else {
            return tool_usage_error("asyncrt-cache", "unknown option '%s'", argv[i]);
        }
    }
    if (i >= argc) return tool_usage_error("asyncrt-cache", "no command given");
    const cache_command *cmd = NULL;
    for (const cache_command *const *c = cache_commands; *c && !cmd; c++)
        if (!strcmp((*c)->name, argv[i])) cmd = *c;
    if (!cmd) return tool_usage_error("asyncrt-cache", "unknown command '%s'", argv[i]);
    int cmd_argc = take_json(argc - i, argv + i, &json);
    if (tool_wants_help(cmd_argc, argv + i)) {
        fputs(cmd->usage, stdout);
        return TOOL_EXIT_OK;
    }

    cache_tool tool = {.json = json, .quiet = quiet};
    /* The directory, cap and mode as the library reads them from the environment. */
    if (asyncrt_context_create(&tool.ctx) != ASYNCRT_SUCCESS)
        return cache_fail(&tool, NULL, TOOL_EXIT_IO, "out of memory");
    const char *dir = dir_arg ? dir_arg : asyncrt_context_cache_dir(tool.ctx);
    if (!dir) {
        asyncrt_context_destroy(tool.ctx);
        return cache_fail(&tool, NULL, TOOL_EXIT_IO, "no cache directory: caching is off (ASYNCRT_CACHE=0) or HOME "
                                                     "is unset; use --dir");
    }
    /* The door: opened once (created for the commands that fill the cache),
     * judged on what was opened; the commands use only the handle. */
    asyncrt_cache_dir_options o = ASYNCRT_CACHE_DIR_OPTIONS_INIT;
    o.dir = dir;
    o.create = tool_command_fills_cache(cmd);
    asyncrt_cache_info info = ASYNCRT_CACHE_INFO_INIT;
    if (asyncrt_cache_dir_open(tool.ctx, &o, &tool.cache) != ASYNCRT_SUCCESS ||
        asyncrt_cache_dir_info(tool.cache, &info) != ASYNCRT_SUCCESS) {
        struct stat st;
        int rc = lstat(dir, &st) != 0 /* nothing there: no such cache; something: not one the library uses */
                     ? cache_fail(&tool, NULL, TOOL_EXIT_IO, "no cache directory at %s", dir)
                     : cache_fail(&tool, cmd->name, TOOL_EXIT_IO, "the library would not use this directory: %s",
                                  asyncrt_context_last_error(tool.ctx));
        asyncrt_cache_dir_close(tool.cache);
        asyncrt_context_destroy(tool.ctx);
        return rc;
    }
    tool.dir = info.dir;
    tool.shared = info.shared;
    tool.cap = info.max_bytes;
    tool.cap_malformed = info.max_malformed;
    tool.trusted = info.used;
    snprintf(tool.why, sizeof tool.why, "%s", info.why);
    int rc;
    if (!tool.trusted && cmd->needs_trust) {
        rc = cache_fail(&tool, cmd->name, TOOL_EXIT_IO, "the library would not use this directory: %s", tool.why);
    } else {
        if (!tool.trusted) fprintf(stderr, "asyncrt-cache: note: the library does not use this directory: %s\n", tool.why);
        rc = cmd->run(&tool, cmd_argc, argv + i);
    }
    if (json && rc && !cache_json_started()) /* a usage error, or a failure said on stderr only */
        tool_json_error(stdout, "asyncrt-cache", "see the message on stderr", rc);
    asyncrt_cache_dir_close(tool.cache);
    asyncrt_context_destroy(tool.ctx);
    return rc;
}
