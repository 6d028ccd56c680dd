/* The libraries a context loads on first need: the CUDA driver's table and
 * NVRTC (both dlopen()ed once per process; see driver.c, nvrtc_loader.c). */
#include "context.h"
#include "context_internal.h"

asyncrt_status asyncrt__require_driver(asyncrt_context *ctx)
{
    /* The table itself loads once per process (pthread_once in driver.c);
     * the lock only orders the write of ctx->drv against other threads. */
    pthread_mutex_lock(&ctx->lock);
    const asyncrt_driver *drv = ctx->drv;
    pthread_mutex_unlock(&ctx->lock);
    if (drv) return ASYNCRT_SUCCESS;
    char why[512];
    asyncrt_status s = asyncrt__driver_load(&drv, why, sizeof why);
    if (s != ASYNCRT_SUCCESS) return asyncrt__fail(ctx, s, "%s", why);
    pthread_mutex_lock(&ctx->lock);
    bool first = !ctx->drv;
    ctx->drv = drv;
    pthread_mutex_unlock(&ctx->lock);
    if (first)
        asyncrt__log(ctx, 2, "CUDA driver loaded, version %d.%d", drv->version / 1000,
                    drv->version % 1000 / 10);
    return ASYNCRT_SUCCESS;
}

asyncrt_status asyncrt__require_nvrtc(asyncrt_context *ctx, const asyncrt_nvrtc **out)
{
    char why[2048];
    asyncrt_status s = asyncrt__nvrtc_load(out, why, sizeof why);
    if (s != ASYNCRT_SUCCESS) return asyncrt__fail(ctx, s, "%s", why);
    return ASYNCRT_SUCCESS;
}

asyncrt_status asyncrt__context_driver(asyncrt_context *ctx, const asyncrt_driver **out)
{
    *out = NULL;
    ASYNCRT_TRY(asyncrt__require_driver(ctx));
    pthread_mutex_lock(&ctx->lock);
    *out = ctx->drv;
    pthread_mutex_unlock(&ctx->lock);
    return ASYNCRT_SUCCESS;
}
