/* Errors and logs (diag.c), the bottom layer every runtime file reports
 * through. An asyncrt_diag holds one last-error message per thread and the
 * log level; a context owns one (context.h adds the asyncrt__fail(ctx, ...)
 * forms the layers above the context use). */
#ifndef ASYNCRT_DIAG_H
#define ASYNCRT_DIAG_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>

#include "asyncrt/status.h"
#include "driver.h"
#include "format.h"

typedef struct asyncrt_diag {
    pthread_mutex_t lock;              /* guards errors */
    struct asyncrt_error_slot *errors; /* one last-error message per thread */
    int log_level;                     /* 0 quiet, 1 decisions, 2 every failure */
} asyncrt_diag;

bool asyncrt__diag_init(asyncrt_diag *d, int log_level);
void asyncrt__diag_destroy(asyncrt_diag *d); /* frees every thread's message */

/* The last-error rule: every public call that can fail starts with
 * asyncrt__enter(ctx) (context_report.h). The outermost one clears the message, so
 * after a success it is ""; a public call made inside another (a cleanup on an
 * error path, module_build's compile) leaves the outer call's message alone.
 * The depth is the calling thread's; the public function's wrapper undoes it
 * when the call returns (context_report.h). */
void asyncrt__diag_enter(asyncrt_diag *d);
void asyncrt__diag_leave(asyncrt_diag *d);

/* Sets the calling thread's last-error message and returns `status`. */
asyncrt_status asyncrt__diag_fail(asyncrt_diag *d, asyncrt_status status, const char *fmt, ...)
    ASYNCRT_PRINTF(3, 4);
asyncrt_status asyncrt__diag_vfail(asyncrt_diag *d, asyncrt_status status, const char *fmt, va_list ap);
/* A failed driver call: "cuModuleLoadDataEx failed: CUDA_ERROR_X (text)" plus what fmt says. */
asyncrt_status asyncrt__diag_vfail_cu(asyncrt_diag *d, const asyncrt_driver *drv, asyncrt_status status,
                                     CUresult result, const char *call, const char *fmt, va_list ap);

/* Logs when level <= d's level (d may be NULL: nothing), to stderr, prefixed "asyncrt: ". */
void asyncrt__diag_log(const asyncrt_diag *d, int level, const char *fmt, ...)
    ASYNCRT_PRINTF(3, 4);
void asyncrt__diag_vlog(const asyncrt_diag *d, int level, const char *fmt, va_list ap);

/* The calling thread's message: borrowed (valid until its next failure), a
 * malloc'd copy ("" if none), and dropping the thread's slot (pool threads
 * do before they exit). */
const char *asyncrt__diag_last_error(asyncrt_diag *d);
char *asyncrt__diag_error_copy(asyncrt_diag *d);
void asyncrt__diag_error_forget(asyncrt_diag *d);

/* Milliseconds on a monotonic clock, for the debug log's timings. */
double asyncrt__now_ms(void);

#endif
