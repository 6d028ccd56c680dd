/* Overlapping NVRTC with the driver's start-up: while
 * asyncrt_context_open_device_async initialises the driver (cuInit and the
 * primary context, ~250 ms on an H100 machine), a compile for arch "auto"
 * starts on the target this cache directory last saw for that device
 * ordinal on this host. Once the device is known the guess is checked: a
 * right guess saved the overlap, a wrong one costs a recompile and is never
 * returned, since only the target resolved from the real device is accepted.
 * This file keeps the remembered targets; compile/speculative.c guesses from
 * them and judges the guess, and the compile flow compiles it. */
#ifndef ASYNCRT_SPECULATE_H
#define ASYNCRT_SPECULATE_H

#include <stdbool.h>
#include <stddef.h>

#include "asyncrt/runtime.h"

/* Called once the device is open: remembers its "auto" target in a side
 * file of the cache (target-<host>-device-<ordinal>, cache.h). Failures
 * only log. */
void asyncrt__speculation_record(asyncrt_context *ctx);

/* The remembered target for `ordinal` in ctx's cache directory, if there is
 * a well-formed one (even so it is only ever a hint). */
bool asyncrt__speculation_guess(asyncrt_context *ctx, int ordinal, char *arch, size_t size);

/* A hint's text: one arch name ("sm_90a"), optionally ending in a newline. */
bool asyncrt__speculation_parse(const char *text, char *arch, size_t size);

#endif
