/* What a run found, and its two renderings: text and one JSON object. */
#ifndef ASYNCRT_RUN_REPORT_H
#define ASYNCRT_RUN_REPORT_H

#include <stdio.h>

#include "buffers.h"
#include "check.h"
#include "cli.h"
#include "tool_progress.h"
#include "scan.h"

/* One launch of the run (--then separates them). */
typedef struct run_launch_result {
    char kernel[RUN_SCAN_NAME_MAX];
    const char *lowered;               /* owned by the program, or `kernel` for a plain extern "C" one */
    size_t param_sizes[RUN_MAX_ITEMS];
    size_t param_count;
    int regs, static_shared, local, max_threads; /* cuFuncGetAttribute, once loaded; -1 unknown */
    bool params_known;                 /* from cuFuncGetParamInfo */
    int declared_params;               /* from the source scan; -1 unknown */
    bool timed;
    float median_ms, min_ms, max_ms;
    uint64_t bytes;
    double gbps;
} run_launch_result;

typedef struct run_result {
    int exit_code;
    char *error;                       /* malloc'd; may hold a whole NVRTC log */
    char arch[32];
    char arch_why[768];
    const char *origin;                /* "nvrtc", "memory-cache", "disk-cache" */
    bool is_ptx;
    size_t image_bytes;
    double compile_ms, load_ms;
    bool name_error;                   /* NVRTC could not resolve a --kernel name (and nothing else failed) */
    run_launch_result launches[RUN_MAX_LAUNCHES];
    size_t launch_count;
    run_check checks[RUN_MAX_ITEMS];
    size_t check_count;
    run_found_kernel *scan;            /* the source's kernels (malloc'd), for hints */
    size_t scan_count;
    asyncrt_bundle *bundle;            /* --bundle, loaded for the compiles */
    asyncrt_program *named;            /* --image: the compiled program, whose lowered names the launches use */
    bool graph_timed;                  /* --graph: medians per iteration of the whole sequence (graph.c) */
    float graph_ms, stream_ms;         /* replayed as a graph; launched on the stream as the plain run does */
    tool_progress *progress;           /* the status line on a terminal, NULL when off (--quiet, a pipe) */
} run_result;

/* Records the first failure (later ones are consequences). Returns code. */
int run_fail(run_result *r, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The same for a library call that failed: its status's exit code and the
 * context's message. */
int run_fail_library(run_result *r, const asyncrt_context *ctx, asyncrt_status s);

/* A monotonic clock in milliseconds, for the stages' times in r. */
double run_now_ms(void);

void run_report_text(const run_cli *cli, const run_result *r, const run_buffer *buffers, FILE *out);
void run_report_json(const run_cli *cli, const run_result *r, const run_buffer *buffers, FILE *out);

#endif
