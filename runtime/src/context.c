#include "context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache.h"

char *asyncrt_vformat(const char *fmt, va_list ap)
{
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    if (n < 0) return NULL;
    char *s = malloc((size_t)n + 1);
    if (s) vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

char *asyncrt_format(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = asyncrt_vformat(fmt, ap);
    va_end(ap);
    return s;
}

static void set_error(asyncrt_context *ctx, char *message)
{
    /* Keep the old message when formatting the new one ran out of memory:
     * an empty message would be worse than a stale one. */
    if (!message) return;
    free(ctx->error);
    ctx->error = message;
    asyncrt_log(ctx, 2, "error: %s", message);
}

asyncrt_status asyncrt_fail(asyncrt_context *ctx, asyncrt_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_error(ctx, asyncrt_vformat(fmt, ap));
    va_end(ap);
    return status;
}

asyncrt_status asyncrt_fail_cu(asyncrt_context *ctx, asyncrt_status status, CUresult result,
                               const char *call, const char *fmt, ...)
{
    char code[256];
    asyncrt_driver_describe(ctx->drv, result, code, sizeof code);
    va_list ap;
    va_start(ap, fmt);
    char *what = asyncrt_vformat(fmt, ap);
    va_end(ap);
    set_error(ctx, asyncrt_format("%s failed: %s%s%s", call, code, what && *what ? ": " : "",
                                  what ? what : ""));
    free(what);
    return status;
}

void asyncrt_log(const asyncrt_context *ctx, int level, const char *fmt, ...)
{
    if (!ctx || level > ctx->log_level) return;
    va_list ap;
    va_start(ap, fmt);
    fputs("asyncrt: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

double asyncrt_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static char *default_cache_dir(void)
{
    const char *dir = getenv("ASYNCRT_CACHE_DIR");
    if (dir && *dir) return strdup(dir);
    const char *xdg = getenv("XDG_CACHE_HOME");
    if (xdg && *xdg) return asyncrt_format("%s/asyncrt", xdg);
    const char *home = getenv("HOME");
    if (home && *home) return asyncrt_format("%s/.cache/asyncrt", home);
    return NULL;
}

asyncrt_status asyncrt_context_create(asyncrt_context **out)
{
    *out = NULL;
    asyncrt_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return ASYNCRT_ERROR_OUT_OF_MEMORY;
    ctx->error = strdup("");
    const char *log = getenv("ASYNCRT_LOG");
    ctx->log_level = log ? atoi(log) : 0;
    const char *cache = getenv("ASYNCRT_CACHE");
    ctx->memory_cache = !(cache && strcmp(cache, "0") == 0);
    if (ctx->memory_cache) ctx->cache_dir = default_cache_dir();
    if (!ctx->error) {
        asyncrt_context_destroy(ctx);
        return ASYNCRT_ERROR_OUT_OF_MEMORY;
    }
    *out = ctx;
    return ASYNCRT_SUCCESS;
}

void asyncrt_context_destroy(asyncrt_context *ctx)
{
    if (!ctx) return;
    asyncrt_cache_clear(ctx);
    if (ctx->device_open) ctx->drv->cuDevicePrimaryCtxRelease(ctx->device);
    free(ctx->cache_dir);
    free(ctx->error);
    free(ctx);
}

const char *asyncrt_context_last_error(const asyncrt_context *ctx)
{
    return ctx && ctx->error ? ctx->error : "";
}

void asyncrt_context_set_log_level(asyncrt_context *ctx, int level) { ctx->log_level = level; }

asyncrt_status asyncrt_context_set_cache_dir(asyncrt_context *ctx, const char *dir)
{
    ASYNCRT_ENTER(ctx);
    char *copy = NULL;
    if (dir && !(copy = strdup(dir))) return ASYNCRT_ERROR_OUT_OF_MEMORY;
    free(ctx->cache_dir);
    ctx->cache_dir = copy;
    return ASYNCRT_SUCCESS;
}

const char *asyncrt_context_cache_dir(const asyncrt_context *ctx) { return ctx->cache_dir; }

asyncrt_status asyncrt_require_driver(asyncrt_context *ctx)
{
    if (ctx->drv) return ASYNCRT_SUCCESS;
    char why[512];
    asyncrt_status s = asyncrt_driver_load(&ctx->drv, why, sizeof why);
    if (s != ASYNCRT_SUCCESS) return asyncrt_fail(ctx, s, "%s", why);
    asyncrt_log(ctx, 2, "CUDA driver loaded, version %d.%d", ctx->drv->version / 1000,
                ctx->drv->version % 1000 / 10);
    return ASYNCRT_SUCCESS;
}

asyncrt_status asyncrt_require_nvrtc(asyncrt_context *ctx, const asyncrt_nvrtc **out)
{
    char why[2048];
    asyncrt_status s = asyncrt_nvrtc_load(out, why, sizeof why);
    if (s != ASYNCRT_SUCCESS) return asyncrt_fail(ctx, s, "%s", why);
    return ASYNCRT_SUCCESS;
}

asyncrt_status asyncrt_require_device(asyncrt_context *ctx)
{
    if (!ctx->device_open)
        return asyncrt_fail(ctx, ASYNCRT_ERROR_NO_DEVICE,
                            "no device is open: call asyncrt_context_open_device first");
    CUresult r = ctx->drv->cuCtxSetCurrent(ctx->cu_context);
    if (r != CUDA_SUCCESS)
        return asyncrt_fail_cu(ctx, ASYNCRT_ERROR_DRIVER, r, "cuCtxSetCurrent", "device %d",
                               ctx->info.ordinal);
    return ASYNCRT_SUCCESS;
}

asyncrt_status asyncrt_context_open_device(asyncrt_context *ctx, int ordinal)
{
    ASYNCRT_ENTER(ctx);
    if (ctx->device_open)
        return asyncrt_fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                            "device %d is already open on this context; create another context "
                            "for device %d", ctx->info.ordinal, ordinal);
    asyncrt_device_info info;
    asyncrt_status s = asyncrt_device_probe(ctx, ordinal, &info);
    if (s != ASYNCRT_SUCCESS) return s;
    CUresult r = ctx->drv->cuDeviceGet(&ctx->device, ordinal);
    if (r != CUDA_SUCCESS)
        return asyncrt_fail_cu(ctx, ASYNCRT_ERROR_NO_DEVICE, r, "cuDeviceGet", "device %d", ordinal);
    r = ctx->drv->cuDevicePrimaryCtxRetain(&ctx->cu_context, ctx->device);
    if (r != CUDA_SUCCESS)
        return asyncrt_fail_cu(ctx, ASYNCRT_ERROR_DRIVER, r, "cuDevicePrimaryCtxRetain",
                               "device %d", ordinal);
    ctx->device_open = true;
    ctx->info = info;
    asyncrt_log(ctx, 1, "device %d: %s, compute capability %d.%d, %d SMs", ordinal, info.name,
                info.cc_major, info.cc_minor, info.sm_count);
    return asyncrt_require_device(ctx);
}

const asyncrt_device_info *asyncrt_context_device(const asyncrt_context *ctx)
{
    return ctx->device_open ? &ctx->info : NULL;
}
