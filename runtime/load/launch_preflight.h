/* Launch attributes and the checks made before a launch (module.c calls
 * these): cooperative launch, programmatic dependent launch, clusters. */
#ifndef ASYNCRT_LAUNCH_PREFLIGHT_H
#define ASYNCRT_LAUNCH_PREFLIGHT_H

#include <limits.h>

#include "context.h"

#define ASYNCRT_LAUNCH_MAX_ATTRS 3

/* x*y*z, saturated at ULLONG_MAX on overflow (3 x 32 bits can exceed 64). */
static inline unsigned long long asyncrt__product3(unsigned x, unsigned y, unsigned z)
{
    unsigned long long p = (unsigned long long)x * y; /* two 32-bit factors fit */
    if (z && p > ULLONG_MAX / z) return ~0ull;
    return p * z;
}

/* The launch of `function` (named `name` in messages) as a CUlaunchConfig,
 * its attributes written to attrs[ASYNCRT_LAUNCH_MAX_ATTRS]. grid and block
 * are already normalised (no 0s) and the block size checked; the dynamic
 * shared-memory limit is already raised. Refuses, before anything runs, what
 * the device cannot do (UNSUPPORTED) or cannot hold at once
 * (RESOURCE_LIMIT): a cluster shape no SM group can host, a cooperative grid
 * larger than what can be resident. */
asyncrt_status asyncrt__launch_prepare(asyncrt_context *ctx, CUfunction function, const char *name,
                                      const asyncrt_launch_config *c, const unsigned grid[3],
                                      const unsigned block[3], CUlaunchConfig *cfg,
                                      CUlaunchAttribute *attrs);

#endif
