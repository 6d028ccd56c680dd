/* The context's face of diag.h, for the layers above it (report.c): the
 * last-error rule, failures and logs go to ctx->diag; asyncrt__fail_cu
 * names the driver's error code. ctx may be NULL for log. */
#ifndef ASYNCRT_CONTEXT_REPORT_H
#define ASYNCRT_CONTEXT_REPORT_H

#include "asyncrt/runtime.h"
#include "driver.h" /* CUresult */
#include "format.h" /* ASYNCRT_PRINTF */
#include "sized.h"

/* The last-error rule (diag.h) around a public call, in portable C11 (no
 * cleanup attribute): a public function that can fail is a wrapper around
 * its body, a static function of the same name without the prefix,
 *     asyncrt_status asyncrt_memory_free(asyncrt_context *ctx, asyncrt_deviceptr ptr)
 *     {
 *         asyncrt__enter(ctx);
 *         return asyncrt__leave(ctx, memory_free(ctx, ptr));
 *     }
 * so that every return of the body passes through asyncrt__leave, which
 * undoes the enter and hands the status back. ctx may be NULL (nothing to do). */
void asyncrt__enter(asyncrt_context *ctx);
asyncrt_status asyncrt__leave(asyncrt_context *ctx, asyncrt_status status);
asyncrt_status asyncrt__fail(asyncrt_context *ctx, asyncrt_status status, const char *fmt, ...)
    ASYNCRT_PRINTF(3, 4);
asyncrt_status asyncrt__fail_cu(asyncrt_context *ctx, asyncrt_status status, CUresult result,
                               const char *call, const char *fmt, ...)
    ASYNCRT_PRINTF(5, 6);
void asyncrt__log(const asyncrt_context *ctx, int level, const char *fmt, ...)
    ASYNCRT_PRINTF(3, 4);

/* asyncrt__enter, then, for an entry point whose options struct is optional,
 * the caller's struct read into `full` as asyncrt__sized_take does (NULL
 * caller: `full` keeps its defaults). Leave with asyncrt__leave either way. */
asyncrt_status asyncrt__enter_with(asyncrt_context *ctx, asyncrt_sized type, const void *caller, void *full,
                                   const char *what);
/* A caller's struct of `type` read into `full` (take) or written from it
 * (give) by its size (sized.h); a NULL caller or a size refused is
 * ASYNCRT_ERROR_INVALID_ARGUMENT, the message starting with `what`. */
asyncrt_status asyncrt__sized_take(asyncrt_context *ctx, asyncrt_sized type, const void *caller, void *full,
                                   const char *what);
asyncrt_status asyncrt__sized_give(asyncrt_context *ctx, asyncrt_sized type, void *caller, const void *full,
                                   const char *what);

#endif
