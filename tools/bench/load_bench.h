/* cuModuleLoadData time of the <cuda/barrier> kernel's lean CUBIN against
 * NVRTC's own (runtime/src/lean.h), in the same run. */
#ifndef ASYNCRT_BENCH_LOAD_H
#define ASYNCRT_BENCH_LOAD_H
#include <stdbool.h>

#include "asyncrt/asyncrt.h"

/* Prints one text line (or CSV rows); returns 0 or the tool's failure code. */
int load_bench_run(asyncrt_context *ctx, bool csv);
#endif
