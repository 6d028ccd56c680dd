/* NVTX v3 ranges in the "asyncrt" domain (base/nvtx.c): compile, cache
 * lookup, link, load and launch, each named after its kernel or source, for
 * Nsight Systems' timeline. Nothing is formatted or called unless a profiler
 * injects itself (NVTX_INJECTION64_PATH set, not in a set-uid process), and
 * nothing at all where the build found no NVTX headers (ASYNCRT_NVTX=0,
 * docs/platform.md "NVTX ranges"). Ranges nest per thread: every push has
 * its pop on the same thread. */
#ifndef ASYNCRT_NVTX_H
#define ASYNCRT_NVTX_H

#include <stdbool.h>

#include "format.h" /* ASYNCRT_PRINTF */

/* The kinds, each its own colour in the timeline. */
typedef enum asyncrt_range_kind {
    ASYNCRT_RANGE_COMPILE = 0,
    ASYNCRT_RANGE_CACHE,
    ASYNCRT_RANGE_LINK,
    ASYNCRT_RANGE_LOAD,
    ASYNCRT_RANGE_LAUNCH,
} asyncrt_range_kind;

/* Whether ranges are recorded (a profiler injected), decided once. */
bool asyncrt__nvtx_on(void);
/* Opens a range whose message is the printf-formatted text. */
void asyncrt__range_push(asyncrt_range_kind kind, const char *fmt, ...) ASYNCRT_PRINTF(2, 3);
void asyncrt__range_pop(void);
/* A point in time, e.g. which cache tier answered, inside the open range. */
void asyncrt__range_mark(asyncrt_range_kind kind, const char *fmt, ...) ASYNCRT_PRINTF(2, 3);

#endif
