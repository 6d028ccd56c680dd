/* Compiling, loading, checking the argument lists against the kernels,
 * launching and timing. Each returns an exit code and records failures in r. */
#ifndef ASYNCRT_RUN_LAUNCH_H
#define ASYNCRT_RUN_LAUNCH_H

#include "asyncrt/runtime.h"
#include "cli.h"
#include "report.h"
#include "tool.h"

/* The exit code for a library status (the table shared by the tools). */
#define run_exit_for_status tool_exit_for_status

/* Compiles for cli->arch (or the open device), registering every launch's
 * kernel as a name expression, and writes --emit-ptx/--emit-cubin. Prints
 * NVRTC's warnings (as nvcc does). */
int run_compile(asyncrt_context *ctx, const run_cli *cli, const char *source_name, const char *source,
                const char *source_dir, asyncrt_program **out, run_result *r);

/* Replaces the compiled program's image with the CUBIN at `path` (--image):
 * the kernels keep the names the compile resolved. */
int run_use_image(const char *path, asyncrt_program **program, run_result *r);

/* Loads the module, looks up each launch's kernel and reads its attributes. */
int run_load(asyncrt_context *ctx, const asyncrt_program *program, size_t launch_count, asyncrt_module **module,
             asyncrt_kernel **kernels, run_result *r);

/* Compares launch i's argument sizes with cuFuncGetParamInfo's, or, where
 * the driver lacks it, the argument count with the parameters the source
 * declares. */
int run_check_params(asyncrt_kernel *kernel, const run_cli *cli, size_t launch, const size_t *sizes, run_result *r);

/* The fallback alone (pure): the argument count against
 * r->launches[launch].declared_params (-1: nothing to check). */
int run_check_declared(const run_cli *cli, size_t launch, const size_t *sizes, run_result *r);

/* What one launch needs: the kernel, its argument pointers and sizes, and
 * its stream (NULL: the default stream). */
typedef struct run_prepared {
    asyncrt_kernel *kernel;
    void **args;
    const size_t *sizes;
    asyncrt_stream stream;
} run_prepared;

/* The stream for --priority N. */
int run_priority_stream(asyncrt_context *ctx, int priority, asyncrt_stream *out, run_result *r);

/* Every launch once, in order. Each is synchronized before the next so that
 * a fault names its launch, except where the next one uses --pdl (it must
 * be queued while this one runs). */
int run_sequence(asyncrt_context *ctx, const run_cli *cli, const run_prepared *launches, run_result *r);

/* --warmup untimed then --repeat timed launches of launch i alone; fills
 * its median/min/max. */
int run_time(asyncrt_context *ctx, const run_cli *cli, size_t i, const run_prepared *p, run_result *r);

#endif
