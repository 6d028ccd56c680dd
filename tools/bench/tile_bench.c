/* asyncrt-bench: the tile ops (transpose, 5-point stencil) per path. */
#include "tile_bench.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct tile_arg {
    asyncrt_tile_op *op;
    size_t rows, cols;
    asyncrt_deviceptr in, out;
} tile_arg;

static asyncrt_status run_tile(void *arg)
{
    tile_arg *a = arg;
    return asyncrt_tile_launch(a->op, a->rows, a->cols, a->in, a->out, NULL);
}

asyncrt_status bench_tile(asyncrt_context *ctx, const bench_settings *s, asyncrt_tile_op *op, size_t rows,
                          size_t cols, asyncrt_deviceptr in, asyncrt_deviceptr out, double *ms)
{
    tile_arg a = {op, rows, cols, in, out};
    return bench_timed(ctx, s, run_tile, &a, ms);
}

int tile_bench_run(asyncrt_context *ctx, const bench_settings *s, const bool *paths, size_t rows, size_t cols,
                   tile_bench_format format)
{
    bool csv = format == TILE_BENCH_CSV, json = format == TILE_BENCH_JSON;
    int results = 0;
    static const float five_point[9] = {0, 1, 0, 1, -4, 1, 0, 1, 0};
    size_t bytes = rows * cols * 4;
    asyncrt_deviceptr in = 0, out = 0;
    asyncrt_status st;
    double ceiling = 0, ms = 0;
    if ((st = asyncrt_memory_alloc(ctx, bytes, &in)) || (st = asyncrt_memory_alloc(ctx, bytes, &out)) ||
        (st = asyncrt_memory_fill(ctx, in, 0x3c, bytes, NULL)) || (st = bench_copy(ctx, s, out, in, bytes, &ms)))
        goto done;
    ceiling = 2.0 * bytes / (ms * 1e6);
    if (json)
        printf(",\n  \"tile_ops\": {\"rows\": %zu, \"cols\": %zu, \"size_mib\": %zu, \"d2d_ms\": %.6f, "
               "\"d2d_gb_per_s\": %.2f, \"results\": [",
               rows, cols, bytes >> 20, ms, ceiling);
    else if (csv) printf("tile-copy,d2d,%zu,%.6f,%.2f,100.00\n", bytes >> 20, ms, ceiling);
    else
        printf("\n2D tile ops, %zu x %zu f32 (%zu MiB); cuMemcpyDtoD of the same bytes: %.4f ms, %.1f GB/s\n"
               "%-10s %-7s %-7s %11s %9s %8s\n",
               rows, cols, bytes >> 20, ms, ceiling, "op", "path", "ran", "ms", "GB/s", "% D2D");
    for (int kind = ASYNCRT_TILE_TRANSPOSE; !st && kind <= ASYNCRT_TILE_STENCIL; kind++)
        for (int p = ASYNCRT_PATH_TMA; !st && p <= ASYNCRT_PATH_PLAIN; p++) {
            if (!paths[p]) continue;
            asyncrt_tile_desc d = {.size = sizeof d,
                                   .kind = (asyncrt_tile_kind)kind, .dtype = ASYNCRT_F32, .path = (asyncrt_op_path)p};
            if (kind == ASYNCRT_TILE_STENCIL) {
                d.radius = 1;
                d.weights = five_point;
            }
            asyncrt_tile_op *op = NULL;
            if ((st = asyncrt_tile_create(ctx, &d, &op)) || (st = bench_tile(ctx, s, op, rows, cols, in, out, &ms))) {
                asyncrt_tile_destroy(op);
                break;
            }
            const char *name = kind == ASYNCRT_TILE_STENCIL ? "stencil5" : "transpose";
            const char *path = asyncrt_op_path_name((asyncrt_op_path)p);
            const char *ran = asyncrt_op_path_name(asyncrt_tile_launch_path(op, rows, cols, in, out));
            double gbs = 2.0 * bytes / (ms * 1e6);
            if (json)
                printf("%s\n    {\"op\": \"%s\", \"path\": \"%s\", \"ran\": \"%s\", \"ms\": %.6f, \"gb_per_s\": %.2f, "
                       "\"pct_of_d2d\": %.2f}",
                       results++ ? "," : "", name, path, ran, ms, gbs, 100.0 * gbs / ceiling);
            else if (csv) printf("%s,%s,%zu,%.6f,%.2f,%.2f\n", name, path, bytes >> 20, ms, gbs, 100.0 * gbs / ceiling);
            else printf("%-10s %-7s %-7s %11.4f %9.1f %7.1f%%\n", name, path, ran, ms, gbs, 100.0 * gbs / ceiling);
            asyncrt_tile_destroy(op);
        }
done:
    if (json && ceiling > 0) printf("\n  ]}");
    if (st) fprintf(stderr, "asyncrt-bench: tile ops: %s\n", asyncrt_context_last_error(ctx));
    asyncrt_memory_free(ctx, in);
    asyncrt_memory_free(ctx, out);
    return st ? 1 : 0;
}
