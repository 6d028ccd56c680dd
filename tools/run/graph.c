/* asyncrt-run --graph N: capture once, replay, time against the stream. */
#include "graph.h"

#include <stdlib.h>

struct run_graph {
    asyncrt_stream stream, owned; /* `owned`: made here (no --priority), destroyed here */
    asyncrt_graph *graph;
};

void run_graph_free(asyncrt_context *ctx, run_graph *gr)
{
    if (!gr) return;
    asyncrt_graph_destroy(gr->graph);
    if (gr->owned) asyncrt_stream_destroy(ctx, gr->owned);
    free(gr);
}

int run_graph_first(asyncrt_context *ctx, const run_cli *cli, const run_gpu *g, run_graph **out, run_result *r)
{
    run_graph *gr = *out = calloc(1, sizeof *gr);
    if (!gr) return run_fail(r, RUN_EXIT_INTERNAL, "out of memory");
    /* lazy loading would load the kernels inside the capture: load them now */
    asyncrt_status s = asyncrt_module_make_resident(run_launch_module(g));
    if (s == ASYNCRT_SUCCESS && !(gr->stream = run_launch_stream(g))) {
        s = asyncrt_stream_create(ctx, &gr->owned);
        gr->stream = gr->owned;
    }
    if (s == ASYNCRT_SUCCESS) s = asyncrt_stream_capture_begin(ctx, gr->stream);
    if (s == ASYNCRT_SUCCESS) {
        asyncrt_status launched = run_launch_all(cli, g, gr->stream);
        /* the capture is ended whatever happened in it: the stream stays usable */
        s = asyncrt_stream_capture_end(ctx, gr->stream, &gr->graph);
        if (launched != ASYNCRT_SUCCESS) {
            asyncrt_graph_destroy(gr->graph);
            gr->graph = NULL;
            s = launched;
        }
    }
    if (s == ASYNCRT_SUCCESS) s = asyncrt_graph_launch(gr->graph, gr->stream);
    if (s == ASYNCRT_SUCCESS) s = asyncrt_stream_synchronize(ctx, gr->stream);
    return s == ASYNCRT_SUCCESS ? RUN_EXIT_OK : run_fail_library(r, ctx, s);
}

static int compare_floats(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* The median of N iterations, each one event pair around the whole sequence:
 * a graph replay, or every launch on the stream. */
static asyncrt_status time_iterations(asyncrt_context *ctx, const run_cli *cli, const run_gpu *g, run_graph *gr,
                                      bool as_graph, float *ms, float *median)
{
    asyncrt_timer *timer = NULL;
    asyncrt_status s = asyncrt_timer_create(ctx, &timer);
    for (unsigned k = 0; s == ASYNCRT_SUCCESS && k < cli->warmup + cli->graph; k++) {
        bool timed = k >= cli->warmup;
        if (timed) s = asyncrt_timer_start(timer, gr->stream);
        if (s == ASYNCRT_SUCCESS)
            s = as_graph ? asyncrt_graph_launch(gr->graph, gr->stream) : run_launch_all(cli, g, gr->stream);
        if (s == ASYNCRT_SUCCESS && timed) s = asyncrt_timer_stop(timer, gr->stream);
        if (s == ASYNCRT_SUCCESS && timed) s = asyncrt_timer_elapsed_ms(timer, &ms[k - cli->warmup]);
    }
    if (s == ASYNCRT_SUCCESS) s = asyncrt_stream_synchronize(ctx, gr->stream);
    asyncrt_timer_destroy(timer);
    if (s == ASYNCRT_SUCCESS) {
        unsigned n = cli->graph;
        qsort(ms, n, sizeof *ms, compare_floats);
        *median = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
    }
    return s;
}

int run_graph_time(asyncrt_context *ctx, const run_cli *cli, const run_gpu *g, run_graph *gr, run_result *r)
{
    float *ms = calloc(cli->graph, sizeof *ms);
    if (!ms) return run_fail(r, RUN_EXIT_INTERNAL, "out of memory");
    asyncrt_status s = time_iterations(ctx, cli, g, gr, false, ms, &r->stream_ms);
    if (s == ASYNCRT_SUCCESS) s = time_iterations(ctx, cli, g, gr, true, ms, &r->graph_ms);
    free(ms);
    if (s != ASYNCRT_SUCCESS) return run_fail_library(r, ctx, s);
    r->graph_timed = true;
    return RUN_EXIT_OK;
}
