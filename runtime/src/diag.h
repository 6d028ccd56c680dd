/* Errors and logs (diag.c): the bottom layer every runtime file reports
 * through. It knows the context only as the owner of the messages. */
#ifndef ASYNCRT_DIAG_H
#define ASYNCRT_DIAG_H

#include <stdarg.h>
#include <stdbool.h>

#include "asyncrt/runtime.h"
#include "driver.h"

/* The last-error rule: every public call that can fail starts with
 * ASYNCRT_ENTER(ctx). The outermost one clears the message, so after a
 * success it is ""; a public call made inside another (a cleanup on an error
 * path, module_build's compile) leaves the outer call's message alone. The
 * depth is the calling thread's (messages are per thread, see diag.c) and
 * is undone when the function returns, by the cleanup attribute. */
asyncrt_context *asyncrt__enter(asyncrt_context *ctx);
void asyncrt__leave(asyncrt_context **ctx);
#define ASYNCRT_ENTER(ctx) \
    asyncrt_context *asyncrt_entered_ __attribute__((cleanup(asyncrt__leave), unused)) = asyncrt__enter(ctx)

/* Sets the last-error message and returns `status`, so that
 * `return asyncrt__fail(ctx, ASYNCRT_ERROR_X, "...", ...);` reads naturally. */
asyncrt_status asyncrt__fail(asyncrt_context *ctx, asyncrt_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A failed driver call: "cuModuleLoadDataEx failed: CUDA_ERROR_X (text)" plus `what`. */
asyncrt_status asyncrt__fail_cu(asyncrt_context *ctx, asyncrt_status status, CUresult result,
                               const char *call, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Logs when level <= the context's level, to stderr, prefixed "asyncrt: ". */
void asyncrt__log(const asyncrt_context *ctx, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The calling thread's last-error message on ctx, malloc'd copy ("" if none),
 * and dropping that thread's slot (pool threads do before they exit). */
char *asyncrt__thread_error_copy(asyncrt_context *ctx);
void asyncrt__thread_error_forget(asyncrt_context *ctx);

/* Frees every thread's message (context destroy). */
void asyncrt__errors_free(asyncrt_context *ctx);

/* Milliseconds on a monotonic clock, for the debug log's timings. */
double asyncrt__now_ms(void);

/* malloc'd printf; NULL on allocation failure. */
char *asyncrt__format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *asyncrt__vformat(const char *fmt, va_list ap);

#endif
