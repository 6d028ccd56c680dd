/* asyncrt-bench --jit: cold-start costs of the JIT (issue 15).
 *  - 12 distinct CCCL kernels (<cuda/barrier>, <cuda/pipeline>,
 *    <cooperative_groups.h>) built one after another vs one asyncrt_build_batch;
 *  - a fresh process whose cache was filled beforehand, main to first kernel
 *    loaded, vs a fresh process that loads the same image from memory;
 *  - a fresh process with an empty cache and arch auto, one CCCL kernel:
 *    open_device then compile vs open_device_async overlapping the compile.
 * Fresh processes are this binary exec'd again (CUDA does not survive fork). */
#ifndef ASYNCRT_BENCH_JIT_BENCH_H
#define ASYNCRT_BENCH_JIT_BENCH_H

#include <stdbool.h>

#include "asyncrt/asyncrt.h"

/* argv[1] of a child run; main() hands such a process to jit_bench_child. */
#define JIT_BENCH_CHILD_FLAG "--jit-child"

/* Runs the section on the open device of ctx and prints it (JSON or a table).
 * `repeats` is the number of timed batches/sequences; fresh-process runs use
 * 2 * repeats + 1 each. Returns a process exit status (0 ok, 1 failed). */
int jit_bench_run(asyncrt_context *ctx, int ordinal, int repeats, bool json);

/* CCCL kernel `index` (cold_<index>: out[i] = (index + 2) * in[i] through
 * cuda::memcpy_async on a cuda::barrier); `salt` makes every cache key new.
 * malloc'd, NULL when out of memory. */
char *jit_bench_kernel_source(int index, int salt);

/* The median of v[0..n) (sorts v). */
double jit_bench_median(double *v, int n);

/* The body of a child process; returns its exit status. */
int jit_bench_child(int argc, char **argv);

#endif
