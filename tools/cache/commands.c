/* The subcommands, one row each: a new one is a cmd_<name>.c defining
 * `const cache_command cmd_<name>` plus one line here. */
#include "tool.h"

extern const cache_command cmd_stats, cmd_list, cmd_verify, cmd_prune, cmd_clear;
extern const cache_command cmd_warm, cmd_export, cmd_import; /* warm.c, transfer.c (issue 15) */
extern const cache_command cmd_push, cmd_pull;               /* cmd_remote.c (issue 26) */
extern const cache_command cmd_explain;                      /* cmd_explain.c (issue 36) */

const cache_command *const cache_commands[] = {
    &cmd_stats,
    &cmd_list,
    &cmd_verify,
    &cmd_prune,
    &cmd_clear,
    &cmd_warm,
    &cmd_export,
    &cmd_import,
    &cmd_push,
    &cmd_pull,
    &cmd_explain,
    NULL,
};

bool tool_command_fills_cache(const cache_command *cmd)
{
    return cmd == &cmd_warm || cmd == &cmd_import || cmd == &cmd_pull;
}
