/* The subcommands, one row each: a new one is a cmd_<name>.c defining
 * `const cache_command cmd_<name>` plus one line here. */
#include "tool.h"

extern const cache_command cmd_stats, cmd_list, cmd_verify, cmd_prune, cmd_clear;

const cache_command *const cache_commands[] = {
    &cmd_stats,
    &cmd_list,
    &cmd_verify,
    &cmd_prune,
    &cmd_clear,
    NULL,
};
