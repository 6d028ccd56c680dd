/* The context's remote cache (cache/remote_cache.h): from the settings at
 * create, or asyncrt_context_set_remote_cache; its counters. */
#include <stdio.h>

#include "cache.h"
#include "context.h"
#include "context_internal.h"
#include "remote_cache.h"

/* The remote the settings ask for, a refused one (its stats say why, a
 * warning at level 1), or NULL when none is asked for or caching is off. */
asyncrt_remote *asyncrt__context_remote_open(asyncrt_context *ctx)
{
    const char *spec = ctx->settings.remote_cache;
    if (!spec || !*spec || !asyncrt__cache_enabled(ctx->cache)) return NULL;
    asyncrt_status status;
    char why[512];
    asyncrt_remote *r = asyncrt__remote_create(spec, ctx->settings.remote_cache_key_file, ctx->cache, &ctx->diag,
                                              &status, why, sizeof why);
    if (r) return r;
    asyncrt__log(ctx, 1, "warning: ASYNCRT_REMOTE_CACHE: %s", why);
    return asyncrt__remote_refused(why);
}

static asyncrt_status context_set_remote_cache(asyncrt_context *ctx, const char *spec, const char *key_file)
{
    asyncrt_remote *r = NULL;
    if (spec) {
        asyncrt_status status;
        char why[512];
        if (!(r = asyncrt__remote_create(spec, key_file ? key_file : ctx->settings.remote_cache_key_file,
                                         ctx->cache, &ctx->diag, &status, why, sizeof why)))
            return asyncrt__fail(ctx, status, "%s", why);
    }
    asyncrt__remote_destroy(ctx->remote);
    ctx->remote = r;
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
    asyncrt__remote_stats(ctx->remote, &full);
    return asyncrt__sized_give((asyncrt_context *)ctx, ASYNCRT_SIZED_REMOTE_CACHE_STATS, out, &full,
                               "remote cache stats");
}

asyncrt_remote *asyncrt__context_remote(asyncrt_context *ctx) { return ctx->remote; }

void asyncrt__context_remote_tally(asyncrt_context *ctx, asyncrt_remote_cache_stats *out, uint64_t *kept)
{
    asyncrt__remote_stats_tally(ctx->cache, out, kept);
}
