/* asyncrt-bench's measurements: each returns a status and fills a result. */
#ifndef ASYNCRT_BENCH_MEASURE_H
#define ASYNCRT_BENCH_MEASURE_H

#include <stddef.h>

#include "asyncrt/asyncrt.h"

typedef struct bench_settings {
    int warmup, repeats;
} bench_settings;

/* Median milliseconds of run(arg), timed with CUDA events, after
 * s->warmup untimed runs and a synchronisation. */
typedef asyncrt_status (*bench_run_fn)(void *arg);
asyncrt_status bench_timed(asyncrt_context *ctx, const bench_settings *s, bench_run_fn run, void *arg, double *ms);

/* Median milliseconds of cuMemcpyDtoD over `bytes`. */
asyncrt_status bench_copy(asyncrt_context *ctx, const bench_settings *s, asyncrt_deviceptr dst,
                          asyncrt_deviceptr src, size_t bytes, double *ms);

/* Median milliseconds of one launch of `map` over n elements. */
asyncrt_status bench_map(asyncrt_context *ctx, const bench_settings *s, asyncrt_map *map, size_t n,
                         const asyncrt_deviceptr *inputs, const asyncrt_deviceptr *outputs,
                         const void *const *scalars, double *ms);

typedef struct bench_jit {
    double cold_ms;        /* asyncrt_map_create with an empty cache: NVRTC + load */
    double disk_ms;        /* a fresh context on the same cache directory */
    double memory_ms;      /* the same context again */
    double barrier_cold_ms; /* a kernel including <cuda/barrier>: source -> loaded module, NVRTC */
    double barrier_disk_ms; /* the same from the disk cache (~385 headers re-checked), median of fresh contexts */
    double bare_launch_us; /* host time per cuLaunchKernelEx of an empty kernel */
    double launch_us;      /* host time per asyncrt_kernel_launch of it */
    double map_launch_us;  /* host time per asyncrt_map_launch over 1 element */
} bench_jit;

#define BENCH_BARRIER_HITS 9 /* fresh contexts timed for barrier_disk_ms */

asyncrt_status bench_jit_costs(asyncrt_context *ctx, int ordinal, bench_jit *out);

#endif
