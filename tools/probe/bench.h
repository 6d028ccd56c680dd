/* --bench: copy bandwidth of the plain, LDGSTS and TMA (bulk) paths as a
 * share of a cuMemcpyDtoD ceiling measured in the same run. */
#ifndef ASYNCRT_PROBE_BENCH_H
#define ASYNCRT_PROBE_BENCH_H

#include "asyncrt/runtime.h"
#include "report.h"

/* Runs on the context's open device; failures land in out->error or the
 * path's error, never abort the probe. Takes a few seconds. */
void probe_bench_device(asyncrt_context *ctx, const asyncrt_device_info *info, probe_bench *out);

#endif
