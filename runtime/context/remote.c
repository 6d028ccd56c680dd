/* The context's face of its cache's remote tier (cache/cache.h): set by
 * asyncrt_context_set_remote_cache, its counters. */
#include "cache.h"
#include "context.h"
#include "context_internal.h"

static asyncrt_status context_set_remote_cache(asyncrt_context *ctx, const char *spec, const char *key_file)
{
    asyncrt_status status;
    char why[512];
    if (!asyncrt__cache_set_remote(ctx->cache, spec, key_file ? key_file : ctx->settings.remote_cache_key_file,
                                   &status, why, sizeof why))
        return asyncrt__fail(ctx, status, "%s", why);
    return ASYNCRT_SUCCESS;
}

asyncrt_status asyncrt_context_set_remote_cache(asyncrt_context *ctx, const char *spec, const char *key_file)
{
    asyncrt__enter(ctx);
    return asyncrt__leave(ctx, context_set_remote_cache(ctx, spec, key_file));
}

/* An observer, as asyncrt_context_cache_stats. */
asyncrt_status asyncrt_context_remote_cache_stats(const asyncrt_context *ctx, asyncrt_remote_cache_stats *out)
{
    asyncrt_remote_cache_stats full;
    if (!ctx) return ASYNCRT_ERROR_INVALID_ARGUMENT;
    asyncrt__cache_remote_stats(ctx->cache, &full);
    return asyncrt__sized_give((asyncrt_context *)ctx, ASYNCRT_SIZED_REMOTE_CACHE_STATS, out, &full,
                               "remote cache stats");
}

asyncrt_cache *asyncrt__context_cache(asyncrt_context *ctx) { return ctx->cache; }
