/* The program cache: in this context's memory, then on disk. */
#ifndef ASYNCRT_CACHE_H
#define ASYNCRT_CACHE_H

#include <stdint.h>

#include "context.h"
#include "program.h"

/* A copy of the cached program for `key`, or NULL on a miss. A damaged or
 * truncated disk entry is a miss (it is deleted and logged), never loaded. */
asyncrt_program *asyncrt_cache_find(asyncrt_context *ctx, const uint8_t key[32]);

/* Stores a copy in memory and on disk. Failures degrade to "not cached" with
 * a logged warning: the cache is an optimisation, never a reason to fail. */
void asyncrt_cache_store(asyncrt_context *ctx, const asyncrt_program *program);

void asyncrt_cache_clear(asyncrt_context *ctx);

/* <dir>/<hex key>.bin, malloc'd; NULL without a cache directory. */
char *asyncrt_cache_entry_path(const asyncrt_context *ctx, const uint8_t key[32]);

#endif
