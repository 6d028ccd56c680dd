/* asyncrt-run's compile stage. Each returns an exit code and records
 * failures in r. */
#ifndef ASYNCRT_RUN_COMPILE_STAGE_H
#define ASYNCRT_RUN_COMPILE_STAGE_H

#include "asyncrt/runtime.h"
#include "cli.h"
#include "report.h"
#include "tool.h"

/* The exit code for a library status (the table shared by the tools). */
#define run_exit_for_status tool_exit_for_status

/* Compiles for cli->arch (or the open device), registering every launch's
 * kernel as a name expression, and writes --emit-ptx/--emit-cubin. Prints
 * NVRTC's warnings (as nvcc does). The target and the library's reason for
 * it (asyncrt_program_arch_reason) go into r. */
int run_compile(asyncrt_context *ctx, const run_cli *cli, const char *source_name, const char *source,
                const char *source_dir, asyncrt_program **out, run_result *r);

/* -v: the NVRTCs the library found, the one it chose and why (stderr). */
void run_explain_nvrtc(void);

/* Replaces the compiled program's image with the CUBIN at `path` (--image):
 * the kernels keep the names the compile resolved. */
int run_use_image(asyncrt_context *ctx, const char *path, asyncrt_program **program, run_result *r);

#endif
