/* Compiling, loading, checking the argument list against the kernel,
 * launching and timing. Each returns an exit code and records failures in r. */
#ifndef ASYNCRT_RUN_LAUNCH_H
#define ASYNCRT_RUN_LAUNCH_H

#include "asyncrt/runtime.h"
#include "cli.h"
#include "report.h"


/* The exit code for a library status. */
int run_exit_for_status(asyncrt_status s);

/* Compiles for cli->arch (or the open device), registering r->kernel as a
 * name expression, and writes --emit-ptx/--emit-cubin. */
int run_compile(asyncrt_context *ctx, const run_cli *cli, const char *source_name, const char *source,
                const char *source_dir, asyncrt_program **out, run_result *r);

int run_load(asyncrt_context *ctx, const asyncrt_program *program, asyncrt_module **module,
             asyncrt_kernel **kernel, run_result *r);

/* Compares the argument sizes with cuFuncGetParamInfo's. */
int run_check_params(asyncrt_kernel *kernel, const run_cli *cli, const size_t *sizes, run_result *r);

/* One launch, then a synchronize so that faults surface here. */
int run_launch(asyncrt_context *ctx, asyncrt_kernel *kernel, const run_cli *cli, void **args,
               const size_t *sizes, run_result *r);

/* --warmup untimed then --repeat timed launches; fills median/min/max. */
int run_time(asyncrt_context *ctx, asyncrt_kernel *kernel, const run_cli *cli, void **args, const size_t *sizes,
             run_result *r);

#endif
