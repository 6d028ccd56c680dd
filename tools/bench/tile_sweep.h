/* asyncrt-bench --tile-sweep and --calibrate. */
#ifndef ASYNCRT_BENCH_TILE_SWEEP_H
#define ASYNCRT_BENCH_TILE_SWEEP_H

#include <stdbool.h>
#include <stddef.h>

#include "measure.h"

/* Every variant (ASYNCRT_TILE_TUNE) x path x build (the device's own, and
 * compute_80 PTX JIT-compiled by the driver: what an A100 build runs) of
 * the transpose and the 5-point stencil, plus the dispatcher's pick and a
 * peer transpose, on a rows x cols f32 matrix of random data; each checked
 * against a CPU reference, then timed against the same run's D2D. `filter`
 * (NULL: all) keeps configurations whose label "op/path/build/tune"
 * contains it, e.g. "transpose/ldgsts/native/variant=blocks". Returns 0, or
 * 1 if any configuration failed or gave a wrong result. */
int tile_sweep_run(asyncrt_context *ctx, const bench_settings *s, size_t rows, size_t cols, const char *filter,
                   bool csv);

/* Measures every path of every op on this device and writes the calibration
 * file the dispatcher reads (runtime/ops/dispatch.h). Returns 0 or 1. */
int bench_calibrate(asyncrt_context *ctx, const bench_settings *s);

#endif
