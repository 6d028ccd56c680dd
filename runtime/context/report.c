/* The context's face of diag.c: the forms of fail and log the layers above
 * the context call with a context, forwarded to the diag it owns. */
#include "context.h"

static asyncrt_diag *diag_of(asyncrt_context *ctx) { return ctx ? &ctx->diag : NULL; }

void asyncrt__enter(asyncrt_context *ctx) { asyncrt__diag_enter(diag_of(ctx)); }

/* One call where the entry reads its options: the flow it starts then
 * comes back to this file once, to leave. */
asyncrt_status asyncrt__enter_with(asyncrt_context *ctx, asyncrt_sized type, const void *caller, void *full,
                                   const char *what)
{
    char why[ASYNCRT_SIZED_WHY];
    asyncrt__diag_enter(diag_of(ctx));
    if (caller && !asyncrt__sized_in(type, caller, full, why))
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "%s: %s", what, why);
    return ASYNCRT_SUCCESS;
}

asyncrt_status asyncrt__leave(asyncrt_context *ctx, asyncrt_status status)
{
    asyncrt__diag_leave(diag_of(ctx));
    return status;
}

asyncrt_status asyncrt__fail(asyncrt_context *ctx, asyncrt_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    asyncrt__diag_vfail(&ctx->diag, status, fmt, ap);
    va_end(ap);
    return status;
}

asyncrt_status asyncrt__fail_cu(asyncrt_context *ctx, asyncrt_status status, CUresult result,
                               const char *call, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    asyncrt__diag_vfail_cu(&ctx->diag, ctx->drv, status, result, call, fmt, ap);
    va_end(ap);
    return status;
}

asyncrt_status asyncrt__sized_take(asyncrt_context *ctx, asyncrt_sized type, const void *caller, void *full,
                                   const char *what)
{
    char why[ASYNCRT_SIZED_WHY];
    if (!caller) return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "%s: the struct is NULL", what);
    if (!asyncrt__sized_in(type, caller, full, why))
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "%s: %s", what, why);
    return ASYNCRT_SUCCESS;
}

asyncrt_status asyncrt__sized_give(asyncrt_context *ctx, asyncrt_sized type, void *caller, const void *full,
                                   const char *what)
{
    char why[ASYNCRT_SIZED_WHY];
    if (!caller) return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "%s: the struct is NULL", what);
    if (!asyncrt__sized_out(type, caller, full, why))
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "%s: %s", what, why);
    return ASYNCRT_SUCCESS;
}

void asyncrt__log(const asyncrt_context *ctx, int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    asyncrt__diag_vlog(ctx ? &ctx->diag : NULL, level, fmt, ap);
    va_end(ap);
}

const char *asyncrt_context_last_error(const asyncrt_context *ctx)
{
    /* Only the slot list is shared; the message is the calling thread's. */
    return ctx ? asyncrt__diag_last_error(&((asyncrt_context *)ctx)->diag) : "";
}
