/* asyncrt-run with several sources and device libraries (issue 27):
 * `asyncrt-run main.cu util.cu --link lib.a --lto ...` compiles each source
 * for linking (-rdc=true, or -dlto with --lto), links them with the --link
 * files through asyncrt_link_*, and runs the linked image like a single
 * source's. A --kernel is looked up in every source. */
#ifndef ASYNCRT_RUN_LINK_RUN_H
#define ASYNCRT_RUN_LINK_RUN_H

#include <stdbool.h>
#include <stddef.h>

#include "asyncrt/asyncrt.h"
#include "cli.h"
#include "report.h"

/* True when the command line links: more than one source, --link, --lto or -Xnvjitlink. */
bool run_link_wanted(const run_cli *cli);

/* The combinations linking rules out (stdin among several sources, --emit-ptx
 * of a linked CUBIN, --emit-lib's rules); false with the message. For the parser. */
bool run_link_check(const run_cli *cli, char *err, size_t err_size);

/* The other sources' texts appended to `first`'s, for the kernel scan
 * (*joined malloc'd). */
int run_link_join_sources(const run_cli *cli, const char *first, char **joined, run_result *r);

/* Compiles every source for linking, links, fills r as run_compile does and
 * writes --emit-cubin. */
int run_link_compile(asyncrt_context *ctx, const run_cli *cli, const char *first, asyncrt_program **out,
                     run_result *r);

/* After a kernel-choice verdict (r: "no __global__ function", ...): each
 * source compiled as the run would, without name expressions (for --arch
 * auto on the device, opened here). A compile error replaces the verdict
 * (RUN_EXIT_COMPILE, NVRTC's log): it is the real story. Otherwise, also
 * when it cannot compile here (auto without a device; --bundle, not
 * checked), the verdict stands and is returned. */
int run_compile_errors(asyncrt_context *ctx, const run_cli *cli, const char *first, run_result *r);

/* --emit-lib FILE: the source compiled without kernels for linking,
 * FILE.ltoir as LTO-IR (-dlto), FILE.cubin or FILE.o as a relocatable CUBIN
 * (-rdc=true); fills r's arch and image as run_compile does. */
int run_emit_lib(asyncrt_context *ctx, const run_cli *cli, const char *source_name, const char *source, run_result *r);

/* True for a --emit-lib name that asks for LTO-IR (FILE.ltoir). */
bool run_emit_lib_lto(const char *path);

#endif
