/* What first-party tools and tests may use of the context layer, beside the
 * public API. Internal, not libasyncrt's ABI: it is linked from
 * asyncrt_private and may change with the library; the context's struct is
 * not part of it.
 *   context_report.h: asyncrt__fail, asyncrt__fail_cu, asyncrt__log, so a tool's
 *     own failure lands in the context's last error (and log) like the
 *     library's.
 *   asyncrt__context_driver: the driver table the context calls through, for
 *     a tool that calls the driver directly beside the library (asyncrt-bench's
 *     bare cuLaunchKernelEx, asyncrt-probe's tensor-map checks).
 *   asyncrt__context_cache: the context's cache, for the remote tier's tests
 *     (cache_internal.h's cache.h: asyncrt__cache_remote_push, _pull,
 *     _tally); asyncrt-cache has asyncrt/cache.h's calls instead.
 *   asyncrt__context_adopt_cache_dir: the disk cache in a directory opened
 *     and checked once, never reopened by name: the compile worker's, handed
 *     its parent's descriptor (asyncrt-cache: asyncrt_context_use_cache_dir).
 *   asyncrt__context_set_setting: one variable of the context's settings
 *     snapshot, for tests and asyncrt-bench's sweeps that vary a tuning
 *     (ASYNCRT_TILE_TUNE, ...) between the ops of one context. */
#ifndef ASYNCRT_CONTEXT_INTERNAL_H
#define ASYNCRT_CONTEXT_INTERNAL_H

#include "asyncrt/runtime.h"
#include "context_report.h"
#include "driver.h"

/* The table, loaded if needed (loaders.c); NO_DRIVER with why otherwise. */
asyncrt_status asyncrt__context_driver(asyncrt_context *ctx, const asyncrt_driver **out);

/* As if variable `name` (one of base/settings.h's) had been `value` (NULL:
 * unset) when the context was created; only while no other call runs on
 * it (context.c). INVALID_ARGUMENT for a name not in the list. */
asyncrt_status asyncrt__context_set_setting(asyncrt_context *ctx, const char *name, const char *value);

/* The context's disk cache in dir_fd, a directory opened and found trusted
 * through cache_internal.h's asyncrt__dir_open_door (shared mode and key as
 * it found them; `name` for messages): the context's own descriptor of it,
 * never reopened by name, so what the tool checked is what the context
 * reads and writes. OUT_OF_MEMORY when it cannot keep one. */
#include <stdbool.h>
#include <stdint.h>
asyncrt_status asyncrt__context_adopt_cache_dir(asyncrt_context *ctx, const char *name, int dir_fd, bool shared,
                                              const uint8_t mac_key[32]);

/* The context's cache, with its remote tier (cache_internal.h's cache.h). */
typedef struct asyncrt_cache asyncrt_cache;
asyncrt_cache *asyncrt__context_cache(asyncrt_context *ctx);

#endif
