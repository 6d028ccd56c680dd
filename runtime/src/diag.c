/* Errors and logs, the bottom of the runtime: the per-thread last-error
 * message of a context, the failure helpers every file reports through, the
 * debug log and its clock. Calls nothing above it. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "context.h"

char *asyncrt__vformat(const char *fmt, va_list ap)
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

char *asyncrt__format(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = asyncrt__vformat(fmt, ap);
    va_end(ap);
    return s;
}


/* ---- the last error, one per thread ------------------------------------ */

/* Threads are told apart by a serial taken on first use, not by pthread_t,
 * which a new thread may reuse: a reused id would see a dead thread's message. */
struct asyncrt_error_slot {
    uint64_t thread;
    char *message;
    asyncrt_error_slot *next;
};

static atomic_uint_fast64_t g_next_thread_serial = 1;
static _Thread_local uint64_t t_thread_serial;

static uint64_t this_thread(void)
{
    if (!t_thread_serial) t_thread_serial = atomic_fetch_add(&g_next_thread_serial, 1);
    return t_thread_serial;
}

/* Under ctx->lock. */
static asyncrt_error_slot **find_slot(asyncrt_context *ctx, uint64_t thread)
{
    asyncrt_error_slot **at = &ctx->errors;
    while (*at && (*at)->thread != thread) at = &(*at)->next;
    return at;
}

/* Public calls in progress on this thread (ASYNCRT_ENTER), and whether it
 * has set a message on any context: a thread that never failed takes no lock
 * on entry, so launches stay cheap. */
static _Thread_local int t_call_depth;
static _Thread_local bool t_error_set;

asyncrt_context *asyncrt__enter(asyncrt_context *ctx)
{
    if (ctx && t_call_depth++ == 0 && t_error_set) {
        pthread_mutex_lock(&ctx->lock);
        asyncrt_error_slot *slot = *find_slot(ctx, this_thread());
        if (slot && slot->message) slot->message[0] = '\0';
        pthread_mutex_unlock(&ctx->lock);
    }
    return ctx;
}

void asyncrt__leave(asyncrt_context **ctx)
{
    if (*ctx) t_call_depth--;
}

static void set_error(asyncrt_context *ctx, char *message)
{
    /* Keep the old message when formatting the new one ran out of memory:
     * an empty message would be worse than a stale one. */
    if (!message) return;
    asyncrt__log(ctx, 2, "error: %s", message);
    t_error_set = true;
    pthread_mutex_lock(&ctx->lock);
    asyncrt_error_slot **at = find_slot(ctx, this_thread());
    if (!*at && (*at = calloc(1, sizeof **at))) (*at)->thread = this_thread();
    if (*at) {
        free((*at)->message);
        (*at)->message = message;
        message = NULL;
    }
    pthread_mutex_unlock(&ctx->lock);
    free(message);
}

char *asyncrt__thread_error_copy(asyncrt_context *ctx)
{
    pthread_mutex_lock(&ctx->lock);
    asyncrt_error_slot *slot = *find_slot(ctx, this_thread());
    char *copy = strdup(slot && slot->message ? slot->message : "");
    pthread_mutex_unlock(&ctx->lock);
    return copy;
}

void asyncrt__thread_error_forget(asyncrt_context *ctx)
{
    pthread_mutex_lock(&ctx->lock);
    asyncrt_error_slot **at = find_slot(ctx, this_thread()), *slot = *at;
    if (slot) {
        *at = slot->next;
        free(slot->message);
        free(slot);
    }
    pthread_mutex_unlock(&ctx->lock);
}

asyncrt_status asyncrt__fail(asyncrt_context *ctx, asyncrt_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_error(ctx, asyncrt__vformat(fmt, ap));
    va_end(ap);
    return status;
}

asyncrt_status asyncrt__fail_cu(asyncrt_context *ctx, asyncrt_status status, CUresult result,
                               const char *call, const char *fmt, ...)
{
    char code[256];
    asyncrt__driver_describe(ctx->drv, result, code, sizeof code);
    va_list ap;
    va_start(ap, fmt);
    char *what = asyncrt__vformat(fmt, ap);
    va_end(ap);
    set_error(ctx, asyncrt__format("%s failed: %s%s%s", call, code, what && *what ? ": " : "",
                                  what ? what : ""));
    free(what);
    return status;
}

void asyncrt__log(const asyncrt_context *ctx, int level, const char *fmt, ...)
{
    if (!ctx || level > ctx->log_level) return;
    va_list ap;
    va_start(ap, fmt);
    fputs("asyncrt: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

double asyncrt__now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

const char *asyncrt_context_last_error(const asyncrt_context *ctx)
{
    if (!ctx) return "";
    /* The lock guards the slot list; the message itself belongs to this
     * thread, and only this thread's next failure (or destroy) replaces it. */
    asyncrt_context *mut = (asyncrt_context *)ctx;
    pthread_mutex_lock(&mut->lock);
    asyncrt_error_slot *slot = *find_slot(mut, this_thread());
    const char *message = slot && slot->message ? slot->message : "";
    pthread_mutex_unlock(&mut->lock);
    return message;
}

void asyncrt__errors_free(asyncrt_context *ctx)
{
    while (ctx->errors) {
        asyncrt_error_slot *slot = ctx->errors;
        ctx->errors = slot->next;
        free(slot->message);
        free(slot);
    }
}
