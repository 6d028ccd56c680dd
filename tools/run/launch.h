/* asyncrt-run's launch stage (launch.c): everything from the compiled
 * program to timed launches, through the library's public API. Each returns
 * an exit code and records failures in r. */
#ifndef ASYNCRT_RUN_LAUNCH_H
#define ASYNCRT_RUN_LAUNCH_H

#include "asyncrt/runtime.h"
#include "buffers.h"
#include "cli.h"
#include "report.h"

/* The GPU state of a run: module, kernels, argument values, tensor maps,
 * streams. Freed in one place. */
typedef struct run_gpu run_gpu;

/* Loads the program (-v: what each kernel uses), checks every launch's
 * arguments against its kernel, uploads the buffers, encodes the tensor
 * maps and builds each launch's arguments and stream. *out is set even on
 * failure: free it with run_launch_free. */
int run_launch_prepare(asyncrt_context *ctx, const run_cli *cli, const asyncrt_program *program,
                       run_buffer *buffers, run_gpu **out, run_result *r);

/* Every launch once, in order. Each is synchronized before the next so that
 * a fault names its launch, except where the next one uses --pdl (it must
 * be queued while this one runs). */
int run_launch_sequence(asyncrt_context *ctx, const run_cli *cli, const run_gpu *g, run_result *r);

/* With --repeat: --warmup untimed then --repeat timed launches of each
 * launch alone; fills its median/min/max and GB/s (--bytes, else the
 * distinct buffers its arguments reach). */
int run_launch_time(asyncrt_context *ctx, const run_cli *cli, const run_gpu *g, const run_buffer *buffers,
                    run_result *r);

void run_launch_free(asyncrt_context *ctx, run_gpu *g); /* NULL is fine */

/* --graph (graph.c): every launch once, in order, on `stream`, nothing
 * synchronized: one iteration, to capture or to time. */
asyncrt_status run_launch_all(const run_cli *cli, const run_gpu *g, asyncrt_stream stream);
/* The stream of the launches' --priority (one, or none: then NULL), and the module. */
asyncrt_stream run_launch_stream(const run_gpu *g);
asyncrt_module *run_launch_module(const run_gpu *g);

/* --compile-only: what a run would check of the arguments before it needs
 * the device, but the parameter sizes (the driver lists them): each --arg
 * buf:NAME+N inside its buffer, each launch's argument count against the
 * parameters its kernel declares. A command line without --arg, --buf or
 * --tmap describes no run: nothing to check (README: "--compile-only"). */
int run_check_without_device(const run_cli *cli, const run_buffer *buffers, run_result *r);

/* The argument count of launch `launch` against
 * r->launches[launch].declared_params (-1: nothing to check), where the
 * driver cannot list parameter sizes (pure). */
int run_check_declared(const run_cli *cli, size_t launch, const size_t *sizes, run_result *r);

#endif
