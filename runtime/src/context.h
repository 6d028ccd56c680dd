/* The context's insides, shared by the runtime's files (not installed). */
#ifndef ASYNCRT_CONTEXT_INTERNAL_H
#define ASYNCRT_CONTEXT_INTERNAL_H

#include <stdarg.h>

#include "asyncrt/runtime.h"
#include "driver.h"
#include "nvrtc_loader.h"

typedef struct asyncrt_cached_program asyncrt_cached_program; /* cache.c */

struct asyncrt_context {
    const asyncrt_driver *drv;       /* NULL until the driver is needed */
    int log_level;
    char *cache_dir;                 /* NULL: no disk cache */
    bool memory_cache;               /* ASYNCRT_CACHE=0 turns both caches off */
    asyncrt_cached_program *programs;/* the in-process cache */
    bool device_open;
    CUdevice device;
    CUcontext cu_context;            /* the device's retained primary context */
    asyncrt_device_info info;
    char *error;                     /* last-error message, heap, never NULL after create */
    const char *fault;               /* test seam: a call to fail, see asyncrt_fault_hit */
    int call_depth;                  /* public calls in progress, see ASYNCRT_ENTER */
};

/* The last-error rule: every public call that can fail starts with
 * ASYNCRT_ENTER(ctx). The outermost one clears the message, so after a
 * success it is ""; a public call made inside another (a cleanup on an error
 * path, module_build's compile) leaves the outer call's message alone. The
 * depth is undone when the function returns, by the cleanup attribute. */
static inline asyncrt_context *asyncrt_enter(asyncrt_context *ctx)
{
    if (ctx && ctx->call_depth++ == 0 && ctx->error) ctx->error[0] = '\0';
    return ctx;
}
static inline void asyncrt_leave(asyncrt_context **ctx)
{
    if (*ctx) (*ctx)->call_depth--;
}
#define ASYNCRT_ENTER(ctx) \
    asyncrt_context *asyncrt_entered_ __attribute__((cleanup(asyncrt_leave), unused)) = asyncrt_enter(ctx)

/* Test seam for calls that do not go through the driver table (NVRTC): true
 * when the tests asked this context to fail `call`. Driver calls are failed by
 * swapping an entry of a copy of ctx->drv instead. */
static inline bool asyncrt_fault_hit(const asyncrt_context *ctx, const char *call)
{
    return ctx->fault && __builtin_strcmp(ctx->fault, call) == 0;
}

/* Sets the last-error message and returns `status`, so that
 * `return asyncrt_fail(ctx, ASYNCRT_ERROR_X, "...", ...);` reads naturally. */
asyncrt_status asyncrt_fail(asyncrt_context *ctx, asyncrt_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A failed driver call: "cuModuleLoadDataEx failed: CUDA_ERROR_X (text)" plus `what`. */
asyncrt_status asyncrt_fail_cu(asyncrt_context *ctx, asyncrt_status status, CUresult result,
                               const char *call, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Logs when level <= the context's level, to stderr, prefixed "asyncrt: ". */
void asyncrt_log(const asyncrt_context *ctx, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Loads the driver into ctx->drv if needed. */
asyncrt_status asyncrt_require_driver(asyncrt_context *ctx);

/* The process's NVRTC, opened on first need; NO_NVRTC (with where it looked) if none. */
asyncrt_status asyncrt_require_nvrtc(asyncrt_context *ctx, const asyncrt_nvrtc **out);

/* Fails unless a device is open; makes its context current for this thread. */
asyncrt_status asyncrt_require_device(asyncrt_context *ctx);

/* Milliseconds on a monotonic clock, for the debug log's timings. */
double asyncrt_now_ms(void);

/* malloc'd printf; NULL on allocation failure. */
char *asyncrt_format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *asyncrt_vformat(const char *fmt, va_list ap);

#endif
