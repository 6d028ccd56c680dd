/* TEMPORARY entry point for the issue-15 subcommands on the coldstart
 * branch. The cache branch (issue 12) owns asyncrt-cache's real main and its
 * subcommand table; at merge, its table gains warm/export/import from
 * cache_cmds.h and this file goes away. */
#include <stdio.h>
#include <string.h>

#include "cache_cmds.h"

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*run)(int, char **);
    } commands[] = {{"warm", asyncrt_cache_cmd_warm},
                    {"export", asyncrt_cache_cmd_export},
                    {"import", asyncrt_cache_cmd_import}};
    for (size_t i = 0; argc > 1 && i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name)) return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "usage: asyncrt-cache warm|export|import ... (--help after each)\n");
    return CACHE_EXIT_USAGE;
}
