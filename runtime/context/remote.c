/* The context's face of its cache's remote tier (cache/cache.h): set by
 * asyncrt_context_set_remote_cache, its counters. */
#include "cache.h"
#include "context.h"
#include "context_internal.h"

asyncrt_status asyncrt_context_set_remote_cache(asyncrt_context *ctx, const char *spec, const char *key_file)
{
    ASYNCRT_ENTER(ctx);
    asyncrt_status status;
    char why[512];
    if (!asyncrt__cache_set_remote(ctx->cache, spec, key_file ? key_file : ctx->settings.remote_cache_key_file,
                                   &status, why, sizeof why))
        return asyncrt__fail(ctx, status, "%s", why);
    return ASYNCRT_SUCCESS;
}

asyncrt_status asyncrt_context_remote_cache_stats(const asyncrt_context *ctx, asyncrt_remote_cache_stats *out)
{
    if (!ctx || !out) return ASYNCRT_ERROR_INVALID_ARGUMENT;
    asyncrt__cache_remote_stats(ctx->cache, out);
    return ASYNCRT_SUCCESS;
}

asyncrt_cache *asyncrt__context_cache(asyncrt_context *ctx) { return ctx->cache; }
