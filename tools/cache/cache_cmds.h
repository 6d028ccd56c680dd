/* asyncrt-cache subcommands from issue 15 (cold start): each takes the
 * arguments after its name (argv[0] is the subcommand) and returns the exit
 * status. The tool's main dispatches to them from its subcommand table. */
#ifndef ASYNCRT_CACHE_CMDS_H
#define ASYNCRT_CACHE_CMDS_H

/* Exit statuses shared by these subcommands. */
#define CACHE_EXIT_OK 0
#define CACHE_EXIT_FAILED 1 /* some build failed, or some entry was refused */
#define CACHE_EXIT_USAGE 2
#define CACHE_EXIT_NO_GPU 3 /* `auto`/`all` targets need a device */

/* warm: compile sources for targets into the cache, in parallel. */
int asyncrt_cache_cmd_warm(int argc, char **argv);
/* export DIR: copy every verified entry of the cache into DIR. */
int asyncrt_cache_cmd_export(int argc, char **argv);
/* import DIR: verify each entry of DIR and store it in the cache. */
int asyncrt_cache_cmd_import(int argc, char **argv);

#endif
