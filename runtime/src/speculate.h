/* Overlapping NVRTC with the driver's start-up: while
 * asyncrt_context_open_device_async initialises the driver (cuInit and the
 * primary context, ~250 ms on an H100 machine), a compile for arch "auto"
 * starts on the target this cache directory last saw for that device
 * ordinal on this host. Once the device is known the guess is checked: a
 * right guess saved the overlap, a wrong one costs a recompile and is never
 * returned, since only the target resolved from the real device is accepted.
 * This file keeps the remembered targets; compile.c makes the guess. */
#ifndef ASYNCRT_SPECULATE_H
#define ASYNCRT_SPECULATE_H

#include <stdbool.h>
#include <stddef.h>

#include "asyncrt/runtime.h"

/* Called once the device is open: remembers its "auto" target beside the
 * cache (<cache dir>/targets/<host>-device-<ordinal>). Failures only log. */
void asyncrt__speculation_record(asyncrt_context *ctx);

/* The remembered target for `ordinal` under `cache_dir`, if there is a
 * well-formed one (a file we did not write is only ever a hint). */
bool asyncrt__speculation_guess(const char *cache_dir, int ordinal, char *arch, size_t size);

#endif
