/* The context: its lifecycle, opening its device (also on another thread),
 * and single flight per cache key. Errors and logs are diag.c's, the lazily
 * loaded libraries loaders.c's: both sit below this file. */
#include "context.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "pch.h"
#include "remote_cache.h"
#include "speculate.h"

static void settle(asyncrt_context *ctx);
static void reset_async_open(asyncrt_context *ctx);

static char *default_cache_dir(void)
{
    const char *dir = getenv("ASYNCRT_CACHE_DIR");
    if (dir && *dir) return strdup(dir);
    const char *xdg = getenv("XDG_CACHE_HOME");
    if (xdg && *xdg) return asyncrt__format("%s/asyncrt", xdg);
    const char *home = getenv("HOME");
    if (home && *home) return asyncrt__format("%s/.cache/asyncrt", home);
    return NULL;
}

asyncrt_status asyncrt_context_create(asyncrt_context **out)
{
    *out = NULL;
    asyncrt_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return ASYNCRT_ERROR_OUT_OF_MEMORY;
    if (pthread_mutex_init(&ctx->lock, NULL) != 0) {
        free(ctx);
        return ASYNCRT_ERROR_OUT_OF_MEMORY;
    }
    bool locks = pthread_mutex_init(&ctx->open_lock, NULL) == 0;
    locks = pthread_cond_init(&ctx->inflight_done, NULL) == 0 && locks;
    atomic_init(&ctx->device_state, ASYNCRT_DEVICE_CLOSED);
    /* Exactly one digit 0..2; anything else ("2junk", "-1", "") leaves logging
     * off, silently: the library prints nothing unless asked, and a value it
     * cannot read is no request. */
    const char *log = getenv("ASYNCRT_LOG");
    ctx->log_level = log && log[0] >= '0' && log[0] <= '2' && !log[1] ? log[0] - '0' : 0;
    const char *cache = getenv("ASYNCRT_CACHE");
    ctx->memory_cache = !(cache && strcmp(cache, "0") == 0);
    if (ctx->memory_cache) ctx->cache_dir = default_cache_dir();
    ctx->cache = asyncrt__cache_create(ctx);
    ctx->pch = asyncrt__pch_create(asyncrt__pch_mode_from_env());
    if (ctx->memory_cache) ctx->remote = asyncrt__remote_from_env(ctx);
    if (!locks || !ctx->cache || !ctx->pch) {
        asyncrt_context_destroy(ctx);
        return ASYNCRT_ERROR_OUT_OF_MEMORY;
    }
    *out = ctx;
    return ASYNCRT_SUCCESS;
}

void asyncrt_context_destroy(asyncrt_context *ctx)
{
    if (!ctx) return;
    settle(ctx); /* never free what the opener thread writes */
    asyncrt__remote_destroy(ctx); /* before the cache: its tally is a side file */
    asyncrt__cache_destroy(ctx);
    asyncrt__pch_destroy(ctx->pch);
    if (ctx->device_open) ctx->drv->cuDevicePrimaryCtxRelease(ctx->device);
    asyncrt__errors_free(ctx);
    free(ctx->cache_dir);
    free(ctx->open_error);
    pthread_cond_destroy(&ctx->inflight_done);
    pthread_mutex_destroy(&ctx->open_lock);
    pthread_mutex_destroy(&ctx->lock);
    free(ctx);
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

asyncrt_status asyncrt__require_device(asyncrt_context *ctx)
{
    ASYNCRT_TRY(asyncrt__wait_device(ctx));
    if (!ctx->device_open)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_NO_DEVICE,
                            "no device is open: call asyncrt_context_open_device first");
    CUresult r = ctx->drv->cuCtxSetCurrent(ctx->cu_context);
    if (r != CUDA_SUCCESS)
        return asyncrt__fail_cu(ctx, ASYNCRT_ERROR_DRIVER, r, "cuCtxSetCurrent", "device %d",
                               ctx->info.ordinal);
    return ASYNCRT_SUCCESS;
}

static asyncrt_status open_device(asyncrt_context *ctx, int ordinal)
{
    ASYNCRT_ENTER(ctx);
    if (ctx->device_open)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                            "device %d is already open on this context; create another context "
                            "for device %d", ctx->info.ordinal, ordinal);
    asyncrt_device_info info;
    ASYNCRT_TRY(asyncrt_device_probe(ctx, ordinal, &info));
    CUresult r = ctx->drv->cuDeviceGet(&ctx->device, ordinal);
    if (r != CUDA_SUCCESS)
        return asyncrt__fail_cu(ctx, ASYNCRT_ERROR_NO_DEVICE, r, "cuDeviceGet", "device %d", ordinal);
    r = ctx->drv->cuDevicePrimaryCtxRetain(&ctx->cu_context, ctx->device);
    if (r != CUDA_SUCCESS)
        return asyncrt__fail_cu(ctx, ASYNCRT_ERROR_DRIVER, r, "cuDevicePrimaryCtxRetain",
                               "device %d", ordinal);
    ctx->device_open = true;
    ctx->info = info;
    asyncrt__log(ctx, 1, "device %d: %s, compute capability %d.%d, %d SMs", ordinal, info.name,
                info.cc_major, info.cc_minor, info.sm_count);
    CUresult current = ctx->drv->cuCtxSetCurrent(ctx->cu_context);
    if (current != CUDA_SUCCESS)
        return asyncrt__fail_cu(ctx, ASYNCRT_ERROR_DRIVER, current, "cuCtxSetCurrent", "device %d",
                               ordinal);
    asyncrt__speculation_record(ctx);
    return ASYNCRT_SUCCESS;
}

asyncrt_status asyncrt_context_open_device(asyncrt_context *ctx, int ordinal)
{
    reset_async_open(ctx);
    return open_device(ctx, ordinal);
}

/* ---- opening the device on another thread -------------------------------- */

typedef struct open_request {
    asyncrt_context *ctx;
    int ordinal;
} open_request;

static void *open_thread(void *arg)
{
    open_request *req = arg;
    asyncrt_context *ctx = req->ctx;
    ctx->open_status = open_device(ctx, req->ordinal);
    if (ctx->open_status != ASYNCRT_SUCCESS) ctx->open_error = asyncrt__thread_error_copy(ctx);
    asyncrt__thread_error_forget(ctx);
    free(req);
    return NULL;
}

asyncrt_status asyncrt_context_open_device_async(asyncrt_context *ctx, int ordinal)
{
    reset_async_open(ctx);
    if (ctx->device_open)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                            "device %d is already open on this context; create another context "
                            "for device %d", ctx->info.ordinal, ordinal);
    open_request *req = malloc(sizeof *req);
    if (!req) return asyncrt__fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    *req = (open_request){ctx, ordinal};
    ctx->open_ordinal = ordinal;
    atomic_store(&ctx->device_state, ASYNCRT_DEVICE_OPENING);
    if (pthread_create(&ctx->opener, NULL, open_thread, req) != 0) {
        /* No thread to spare: open here, which is only slower. */
        free(req);
        atomic_store(&ctx->device_state, ASYNCRT_DEVICE_CLOSED);
        return open_device(ctx, ordinal);
    }
    return ASYNCRT_SUCCESS;
}

bool asyncrt__device_pending(const asyncrt_context *ctx)
{
    return atomic_load(&ctx->device_state) == ASYNCRT_DEVICE_OPENING;
}

/* Joins the opener thread if there is one; afterwards the state is final. */
static void settle(asyncrt_context *ctx)
{
    if (atomic_load(&ctx->device_state) != ASYNCRT_DEVICE_OPENING) return;
    pthread_mutex_lock(&ctx->open_lock);
    if (atomic_load(&ctx->device_state) == ASYNCRT_DEVICE_OPENING) {
        pthread_join(ctx->opener, NULL);
        atomic_store(&ctx->device_state, ASYNCRT_DEVICE_SETTLED);
    }
    pthread_mutex_unlock(&ctx->open_lock);
}

asyncrt_status asyncrt__wait_device(asyncrt_context *ctx)
{
    settle(ctx);
    /* A failed asynchronous open is every later caller's answer, until an
     * open_device call tries again. */
    if (atomic_load(&ctx->device_state) == ASYNCRT_DEVICE_SETTLED && ctx->open_status != ASYNCRT_SUCCESS)
        return asyncrt__fail(ctx, ctx->open_status, "opening the device failed: %s",
                            ctx->open_error ? ctx->open_error : "");
    return ASYNCRT_SUCCESS;
}

/* Before another open: forget an earlier asynchronous attempt. */
static void reset_async_open(asyncrt_context *ctx)
{
    settle(ctx);
    atomic_store(&ctx->device_state, ASYNCRT_DEVICE_CLOSED);
    ctx->open_status = ASYNCRT_SUCCESS;
    free(ctx->open_error);
    ctx->open_error = NULL;
}

asyncrt_status asyncrt_context_wait_device(asyncrt_context *ctx)
{
    return asyncrt__wait_device(ctx);
}

const asyncrt_device_info *asyncrt_context_device(const asyncrt_context *ctx)
{
    if (asyncrt__device_pending(ctx)) asyncrt__wait_device((asyncrt_context *)ctx);
    return ctx->device_open ? &ctx->info : NULL;
}

/* ---- single flight per cache key ----------------------------------------- */

struct asyncrt_inflight {
    uint8_t key[32];
    asyncrt_inflight *next;
};

/* Under ctx->lock. */
static asyncrt_inflight **find_inflight(asyncrt_context *ctx, const uint8_t key[32])
{
    asyncrt_inflight **at = &ctx->inflight;
    while (*at && memcmp((*at)->key, key, 32) != 0) at = &(*at)->next;
    return at;
}

void asyncrt__inflight_enter(asyncrt_context *ctx, const uint8_t key[32])
{
    asyncrt_inflight *mine = malloc(sizeof *mine);
    pthread_mutex_lock(&ctx->lock);
    while (*find_inflight(ctx, key)) pthread_cond_wait(&ctx->inflight_done, &ctx->lock);
    if (mine) { /* out of memory: no claim, so at worst a duplicate compile */
        memcpy(mine->key, key, 32);
        mine->next = ctx->inflight;
        ctx->inflight = mine;
    }
    pthread_mutex_unlock(&ctx->lock);
}

void asyncrt__inflight_leave(asyncrt_context *ctx, const uint8_t key[32])
{
    pthread_mutex_lock(&ctx->lock);
    asyncrt_inflight **at = find_inflight(ctx, key), *node = *at;
    if (node) *at = node->next;
    pthread_cond_broadcast(&ctx->inflight_done);
    pthread_mutex_unlock(&ctx->lock);
    free(node);
}
