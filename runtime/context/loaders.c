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

asyncrt_status asyncrt_context_driver_proc(asyncrt_context *ctx, const char *name, int cuda_version, void **fn)
{
    if (!ctx) return ASYNCRT_ERROR_INVALID_ARGUMENT;
    if (!fn) return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "fn is NULL");
    *fn = NULL;
    if (!name || !*name) return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "the entry point's name is empty");
    if (cuda_version < 2000)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                             "cuda_version %d for %s: it must be a CUDA version as the driver numbers them "
                             "(2000 or more, e.g. 12000 for CUDA 12.0)", cuda_version, name);
    const asyncrt_driver *drv;
    ASYNCRT_TRY(asyncrt__context_driver(ctx, &drv));
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SUCCESS; /* a driver that fails says so */
    CUresult r = drv->cuGetProcAddress(name, fn, cuda_version, CU_GET_PROC_ADDRESS_DEFAULT, &found);
    if (r == CUDA_SUCCESS && *fn && found == CU_GET_PROC_ADDRESS_SUCCESS) return ASYNCRT_SUCCESS;
    *fn = NULL;
    return asyncrt__fail(ctx, ASYNCRT_ERROR_NOT_FOUND, "the CUDA driver has no entry point %s at CUDA %d.%d's ABI%s",
                         name, cuda_version / 1000, cuda_version % 1000 / 10,
                         found == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT ? " (the driver is older)" : "");
}
