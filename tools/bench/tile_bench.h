/* asyncrt-bench's 2D tile ops: transpose and the 5-point stencil of a
 * rows x cols f32 matrix on each path, against cuMemcpyDtoD of the same
 * bytes measured in the same run. */
#ifndef ASYNCRT_BENCH_TILE_BENCH_H
#define ASYNCRT_BENCH_TILE_BENCH_H

#include <stdbool.h>
#include <stddef.h>

#include "measure.h"

typedef enum tile_bench_format { TILE_BENCH_TABLE, TILE_BENCH_CSV, TILE_BENCH_JSON } tile_bench_format;

/* Median milliseconds of one launch of `op`. */
asyncrt_status bench_tile(asyncrt_context *ctx, const bench_settings *s, asyncrt_tile_op *op, size_t rows,
                          size_t cols, asyncrt_deviceptr in, asyncrt_deviceptr out, double *ms);

/* Prints a table, CSV rows op,path,size_mib,ms,gb_per_s,pct_of_d2d, or (json)
 * a ',\n  "tile_ops": {...}' member for the document main.c leaves open, for
 * the paths set in paths[] (indexed by asyncrt_op_path). Returns 0, or 1
 * after printing why a measurement failed. */
int tile_bench_run(asyncrt_context *ctx, const bench_settings *s, const bool *paths, size_t rows, size_t cols,
                   tile_bench_format format);

#endif
