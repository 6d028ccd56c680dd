/* asyncrt-run --graph N (graph.c): the run's launches (--then included)
 * captured once into a CUDA graph on one stream, the checked run being its
 * first replay, then N replays timed against the same launches on the stream. */
#ifndef ASYNCRT_RUN_GRAPH_H
#define ASYNCRT_RUN_GRAPH_H

#include "asyncrt/asyncrt.h"
#include "launch.h"

typedef struct run_graph run_graph;

/* Makes the module resident, captures every launch on the launches' stream
 * (a new one without --priority), and replays the graph once, synchronized:
 * the buffers then hold what the checked run's do. *out is set even on
 * failure: free it with run_graph_free. */
int run_graph_first(asyncrt_context *ctx, const run_cli *cli, const run_gpu *g, run_graph **out, run_result *r);

/* --warmup iterations untimed, then N of each, one event pair per
 * iteration: the median of the graph's replays and of the plain launches. */
int run_graph_time(asyncrt_context *ctx, const run_cli *cli, const run_gpu *g, run_graph *graph, run_result *r);

void run_graph_free(asyncrt_context *ctx, run_graph *graph); /* NULL is fine */

#endif
