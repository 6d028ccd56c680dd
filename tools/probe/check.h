/* --check: proves each feature by running its probe kernel on the device. */
#ifndef ASYNCRT_PROBE_CHECK_H
#define ASYNCRT_PROBE_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#include "asyncrt/runtime.h"
#include "feature_table.h"
#include "report.h"

/* Builds and runs `feature`'s probe kernel on the context's open device on
 * fresh random input and compares every output word with a host reference.
 * True when verified; otherwise `why` says what went wrong. */
bool probe_check_feature(asyncrt_context *ctx, probe_feature feature, char *why, size_t why_size);

/* Fills results[] for the open device: features it lacks are "no" and never
 * attempted; the others are checked (check) or left "not verified". */
void probe_check_device(asyncrt_context *ctx, const asyncrt_device_info *info, bool check,
                        probe_feature_result results[PROBE_FEATURE_COUNT]);

#endif
