/* The context: its lifecycle and the objects it holds, one per layer below
 * (settings, diag, cache), each of which owns its state, and the slot of
 * the compile layer's PCH. Opening the
 * device is device_open.c's, the lazily loaded libraries loaders.c's. */
#include "context.h"

#include <stdlib.h>
#include <string.h>

#include "asyncrt/cache.h"
#include "cache.h"
#include "context_internal.h"
#include "try.h"


asyncrt_status asyncrt_context_create(asyncrt_context **out)
{
    return asyncrt__context_create_with(NULL, NULL, 0, out);
}

asyncrt_status asyncrt__context_create_with(const char *const *names, const char *const *values, size_t count,
                                            asyncrt_context **out)
{
    *out = NULL;
    asyncrt_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return ASYNCRT_ERROR_OUT_OF_MEMORY;
    bool read = asyncrt__settings_read(&ctx->settings);
    for (size_t i = 0; read && i < count; i++) read = asyncrt__settings_set(&ctx->settings, names[i], values[i]);
    if (!read) {
        asyncrt__settings_free(&ctx->settings);
        free(ctx);
        return ASYNCRT_ERROR_OUT_OF_MEMORY;
    }
    const asyncrt_settings *env = &ctx->settings;
    /* Exactly one digit 0..2; anything else ("2junk", "-1", "") leaves logging
     * off, silently: the library prints nothing unless asked, and a value it
     * cannot read is no request. */
    const char *log = env->log;
    int log_level = log && log[0] >= '0' && log[0] <= '2' && !log[1] ? log[0] - '0' : 0;
    if (pthread_mutex_init(&ctx->lock, NULL) != 0 || !asyncrt__diag_init(&ctx->diag, log_level)) {
        asyncrt__settings_free(&ctx->settings);
        free(ctx);
        return ASYNCRT_ERROR_OUT_OF_MEMORY;
    }
    char ignored[512];
    if (asyncrt__settings_ignored_names(env, ignored, sizeof ignored))
        asyncrt__diag_log(&ctx->diag, 1, "note: this process is set-uid or set-gid: ignoring %s (a variable that "
                          "names a library, program, file, folder or server is whoever ran the program's to set, "
                          "not its owner's)", ignored);
    bool locks = asyncrt__opening_init(ctx);
    ctx->root = ctx;
    atomic_init(&ctx->refs, 1);
    ctx->cache = asyncrt__cache_create(env, &ctx->diag);
    if (!locks || !ctx->cache) {
        asyncrt_context_destroy(ctx);
        return ASYNCRT_ERROR_OUT_OF_MEMORY;
    }
    *out = ctx;
    return ASYNCRT_SUCCESS;
}

/* What is the context's alone: its memory, lock, messages and settings. */
static void free_own(asyncrt_context *ctx)
{
    pthread_mutex_destroy(&ctx->lock);
    asyncrt__diag_destroy(&ctx->diag);
    asyncrt__settings_free(&ctx->settings);
    free(ctx);
}

/* The root keeps its memory (the shared cache reports through its diag)
 * until the last of it and its peers is destroyed. */
static void release_root(asyncrt_context *root)
{
    if (atomic_fetch_sub(&root->refs, 1) != 1) return;
    asyncrt__cache_destroy(root->cache);
    if (root->libraries.state) root->libraries.free(root->libraries.state);
    free_own(root);
}

void asyncrt_context_destroy(asyncrt_context *ctx)
{
    if (!ctx) return;
    asyncrt__opening_done(ctx); /* never free what the opener thread writes */
    if (ctx->pch.state) ctx->pch.free(ctx->pch.state); /* deletes its directories */
    if (ctx->compact.state) ctx->compact.free(ctx->compact.state);
    if (ctx->device_open) ctx->drv->cuDevicePrimaryCtxRelease(ctx->device);
    asyncrt_context *root = ctx->root;
    if (!root) { /* failed before it had one: its cache, if any, is its own */
        asyncrt__cache_destroy(ctx->cache);
        free_own(ctx);
        return;
    }
    if (ctx != root) free_own(ctx);
    release_root(root);
}

/* ---- peers: a context per device, one cache ----------------------------- */

static bool copy_settings(asyncrt_settings *to, const asyncrt_settings *from)
{
    bool ok = true;
#define ASYNCRT_COPY_SETTING(field, name, rule) ok = ok && asyncrt__settings_set(to, name, from->field);
    ASYNCRT_SETTINGS(ASYNCRT_COPY_SETTING)
#undef ASYNCRT_COPY_SETTING
    to->ignored = from->ignored;
    return ok;
}

static asyncrt_status create_peer(asyncrt_context *base, int ordinal, asyncrt_context **out)
{
    asyncrt_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return asyncrt__fail(base, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory creating a peer context");
    bool made = pthread_mutex_init(&ctx->lock, NULL) == 0;
    if (!made || !asyncrt__diag_init(&ctx->diag, base->diag.log_level)) {
        if (made) pthread_mutex_destroy(&ctx->lock);
        free(ctx);
        return asyncrt__fail(base, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory creating a peer context");
    }
    asyncrt_context *root = base->root;
    atomic_fetch_add(&root->refs, 1);
    ctx->root = root;
    ctx->cache = root->cache;
    ctx->drv = base->drv;
    if (!copy_settings(&ctx->settings, &base->settings) || !asyncrt__opening_init(ctx)) {
        asyncrt_context_destroy(ctx);
        return asyncrt__fail(base, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory creating a peer context");
    }
    asyncrt_status s = asyncrt_context_open_device(ctx, ordinal);
    if (s != ASYNCRT_SUCCESS) {
        s = asyncrt__fail(base, s, "%s", asyncrt_context_last_error(ctx));
        asyncrt_context_destroy(ctx);
        return s;
    }
    *out = ctx;
    return ASYNCRT_SUCCESS;
}

asyncrt_status asyncrt_context_create_peer(asyncrt_context *base, int ordinal, asyncrt_context **out)
{
    if (out) *out = NULL;
    if (!base) return ASYNCRT_ERROR_INVALID_ARGUMENT;
    asyncrt__enter(base);
    if (!out) return asyncrt__leave(base, asyncrt__fail(base, ASYNCRT_ERROR_INVALID_ARGUMENT, "out is NULL"));
    return asyncrt__leave(base, create_peer(base, ordinal, out));
}

bool asyncrt_context_shares_cache(const asyncrt_context *a, const asyncrt_context *b)
{
    return a && b && a->root == b->root;
}

void asyncrt_context_set_log_level(asyncrt_context *ctx, int level) { ctx->diag.log_level = level; }

static asyncrt_status context_set_cache_dir(asyncrt_context *ctx, const char *dir)
{
    return asyncrt__cache_set_dir(ctx->cache, dir) ? ASYNCRT_SUCCESS : ASYNCRT_ERROR_OUT_OF_MEMORY;
}

asyncrt_status asyncrt_context_set_cache_dir(asyncrt_context *ctx, const char *dir)
{
    asyncrt__enter(ctx);
    return asyncrt__leave(ctx, context_set_cache_dir(ctx, dir));
}

static asyncrt_status context_adopt_cache_dir(asyncrt_context *ctx, const char *name, int dir_fd, bool shared,
                                            const uint8_t mac_key[32])
{
    if (asyncrt__cache_adopt_dir(ctx->cache, name, dir_fd, shared, mac_key)) return ASYNCRT_SUCCESS;
    return asyncrt__fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "cannot keep a descriptor of the cache directory %s", name);
}

asyncrt_status asyncrt__context_adopt_cache_dir(asyncrt_context *ctx, const char *name, int dir_fd, bool shared,
                                              const uint8_t mac_key[32])
{
    asyncrt__enter(ctx);
    return asyncrt__leave(ctx, context_adopt_cache_dir(ctx, name, dir_fd, shared, mac_key));
}

/* An observer: it leaves the last error alone (it may be called while one
 * is being reported) unless it fails itself. The message is the calling
 * thread's, not the state const protects (as asyncrt_context_last_error). */
asyncrt_status asyncrt_context_cache_stats(const asyncrt_context *ctx, asyncrt_cache_stats *out)
{
    asyncrt_cache_stats full;
    if (!ctx) return ASYNCRT_ERROR_INVALID_ARGUMENT;
    asyncrt__cache_stats(ctx->cache, &full);
    return asyncrt__sized_give((asyncrt_context *)ctx, ASYNCRT_SIZED_CACHE_STATS, out, &full, "cache stats");
}

/* An observer too; the directory is checked as a lookup would check it. */
asyncrt_status asyncrt_context_cache_info(const asyncrt_context *ctx, asyncrt_cache_info *out)
{
    asyncrt_cache_info full = ASYNCRT_CACHE_INFO_INIT;
    if (!ctx) return ASYNCRT_ERROR_INVALID_ARGUMENT;
    asyncrt__cache_info(ctx->cache, &full);
    return asyncrt__sized_give((asyncrt_context *)ctx, ASYNCRT_SIZED_CACHE_INFO, out, &full, "cache info");
}

const char *asyncrt_context_cache_dir(const asyncrt_context *ctx) { return asyncrt__cache_dir(ctx->cache); }

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

const asyncrt_device_info *asyncrt_context_device(const asyncrt_context *ctx)
{
    if (asyncrt__device_pending(ctx)) asyncrt__wait_device((asyncrt_context *)ctx);
    return ctx->device_open ? &ctx->info : NULL;
}

asyncrt_status asyncrt__context_set_setting(asyncrt_context *ctx, const char *name, const char *value)
{
    if (asyncrt__settings_set(&ctx->settings, name, value)) return ASYNCRT_SUCCESS;
    return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                        "%s is not a variable the library reads (base/settings.h), or out of memory", name);
}

asyncrt_status asyncrt_context_setting(const asyncrt_context *ctx, const char *name, const char **value)
{
    asyncrt_context *c = (asyncrt_context *)ctx; /* the message is the thread's, not the state const protects */
    if (value) *value = NULL;
    if (!ctx || !value) return ctx ? asyncrt__fail(c, ASYNCRT_ERROR_INVALID_ARGUMENT, "value is NULL")
                                   : ASYNCRT_ERROR_INVALID_ARGUMENT;
    if (!name || !asyncrt__settings_get(&ctx->settings, name, value))
        return asyncrt__fail(c, ASYNCRT_ERROR_INVALID_ARGUMENT,
                             "setting '%s' is not a variable the library reads (README, \"Settings\")",
                             name ? name : "(null)");
    return ASYNCRT_SUCCESS;
}

/* The variables that have a call of their own, which also opens or checks what they name. */
static const char *own_call(const char *name)
{
    if (strcmp(name, "ASYNCRT_CACHE_DIR") == 0) return "asyncrt_context_set_cache_dir";
    if (strcmp(name, "ASYNCRT_REMOTE_CACHE") == 0 || strcmp(name, "ASYNCRT_REMOTE_CACHE_KEY_FILE") == 0)
        return "asyncrt_context_set_remote_cache";
    return NULL;
}

asyncrt_status asyncrt_context_set_setting(asyncrt_context *ctx, const char *name, const char *value)
{
    if (!ctx) return ASYNCRT_ERROR_INVALID_ARGUMENT;
    const char *old;
    if (!name || !asyncrt__settings_get(&ctx->settings, name, &old))
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                             "setting '%s' is not a variable the library reads (README, \"Settings\")",
                             name ? name : "(null)");
    if (own_call(name))
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "setting %s has its own call: use %s", name,
                             own_call(name));
    return asyncrt__context_set_setting(ctx, name, value);
}
