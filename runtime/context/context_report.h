/* The context's face of diag.h, for the layers above it (report.c): the
 * last-error rule of ASYNCRT_ENTER, failures and logs go to ctx->diag;
 * asyncrt__fail_cu names the driver's error code. ctx may be NULL for log. */
#ifndef ASYNCRT_CONTEXT_REPORT_H
#define ASYNCRT_CONTEXT_REPORT_H

#include "asyncrt/runtime.h"
#include "driver.h" /* CUresult */

asyncrt_context *asyncrt__enter(asyncrt_context *ctx);
void asyncrt__leave(asyncrt_context **ctx);
#define ASYNCRT_ENTER(ctx) \
    asyncrt_context *asyncrt_entered_ __attribute__((cleanup(asyncrt__leave), unused)) = asyncrt__enter(ctx)
asyncrt_status asyncrt__fail(asyncrt_context *ctx, asyncrt_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
asyncrt_status asyncrt__fail_cu(asyncrt_context *ctx, asyncrt_status status, CUresult result,
                               const char *call, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void asyncrt__log(const asyncrt_context *ctx, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
