/* Errors and logs, the bottom of the runtime: the per-thread last-error
 * messages of one asyncrt_diag (a context's), the failure helpers every file
 * reports through, the debug log and its clock. Knows no context. */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "diag.h"

/* ---- the last error, one per thread ------------------------------------ */

/* Threads are told apart by a serial taken on first use, not by pthread_t,
 * which a new thread may reuse: a reused id would see a dead thread's message. */
struct asyncrt_error_slot {
    uint64_t thread;
    char *message;
    struct asyncrt_error_slot *next;
};
typedef struct asyncrt_error_slot asyncrt_error_slot;

static atomic_uint_fast64_t g_next_thread_serial = 1;
static _Thread_local uint64_t t_thread_serial;

static uint64_t this_thread(void)
{
    if (!t_thread_serial) t_thread_serial = atomic_fetch_add(&g_next_thread_serial, 1);
    return t_thread_serial;
}

/* Under d->lock. */
static asyncrt_error_slot **find_slot(asyncrt_diag *d, uint64_t thread)
{
    asyncrt_error_slot **at = &d->errors;
    while (*at && (*at)->thread != thread) at = &(*at)->next;
    return at;
}

/* Public calls in progress on this thread (asyncrt__diag_enter), and whether it
 * has set a message on any context: a thread that never failed takes no lock
 * on entry, so launches stay cheap. */
static _Thread_local int t_call_depth;
static _Thread_local bool t_error_set;

bool asyncrt__diag_init(asyncrt_diag *d, int log_level)
{
    *d = (asyncrt_diag){.log_level = log_level};
    return pthread_mutex_init(&d->lock, NULL) == 0;
}

void asyncrt__diag_destroy(asyncrt_diag *d)
{
    while (d->errors) {
        asyncrt_error_slot *slot = d->errors;
        d->errors = slot->next;
        free(slot->message);
        free(slot);
    }
    pthread_mutex_destroy(&d->lock);
}

void asyncrt__diag_enter(asyncrt_diag *d)
{
    if (d && t_call_depth++ == 0 && t_error_set) {
        pthread_mutex_lock(&d->lock);
        asyncrt_error_slot *slot = *find_slot(d, this_thread());
        if (slot && slot->message) slot->message[0] = '\0';
        pthread_mutex_unlock(&d->lock);
    }
}

void asyncrt__diag_leave(asyncrt_diag *d)
{
    if (d) t_call_depth--;
}

static void set_error(asyncrt_diag *d, char *message)
{
    /* Keep the old message when formatting the new one ran out of memory:
     * an empty message would be worse than a stale one. */
    if (!message) return;
    asyncrt__diag_log(d, 2, "error: %s", message);
    t_error_set = true;
    pthread_mutex_lock(&d->lock);
    asyncrt_error_slot **at = find_slot(d, this_thread());
    if (!*at && (*at = calloc(1, sizeof **at))) (*at)->thread = this_thread();
    if (*at) {
        free((*at)->message);
        (*at)->message = message;
        message = NULL;
    }
    pthread_mutex_unlock(&d->lock);
    free(message);
}

char *asyncrt__diag_error_copy(asyncrt_diag *d)
{
    pthread_mutex_lock(&d->lock);
    asyncrt_error_slot *slot = *find_slot(d, this_thread());
    char *copy = strdup(slot && slot->message ? slot->message : "");
    pthread_mutex_unlock(&d->lock);
    return copy;
}

void asyncrt__diag_error_forget(asyncrt_diag *d)
{
    pthread_mutex_lock(&d->lock);
    asyncrt_error_slot **at = find_slot(d, this_thread()), *slot = *at;
    if (slot) {
        *at = slot->next;
        free(slot->message);
        free(slot);
    }
    pthread_mutex_unlock(&d->lock);
}

asyncrt_status asyncrt__diag_vfail(asyncrt_diag *d, asyncrt_status status, const char *fmt, va_list ap)
{
    set_error(d, asyncrt__vformat(fmt, ap));
    return status;
}

asyncrt_status asyncrt__diag_fail(asyncrt_diag *d, asyncrt_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    asyncrt__diag_vfail(d, status, fmt, ap);
    va_end(ap);
    return status;
}

asyncrt_status asyncrt__diag_vfail_cu(asyncrt_diag *d, const asyncrt_driver *drv, asyncrt_status status,
                                     CUresult result, const char *call, const char *fmt, va_list ap)
{
    char code[256];
    asyncrt__driver_describe(drv, result, code, sizeof code);
    char *what = asyncrt__vformat(fmt, ap);
    set_error(d, asyncrt__format("%s failed: %s%s%s", call, code, what && *what ? ": " : "",
                                what ? what : ""));
    free(what);
    return status;
}

/* One line, one write(2): stdio would write the prefix, the text and the
 * newline apart, and lines of threads or processes sharing stderr would
 * interleave ("asyncrt: asyncrt: ..."). Up to PIPE_BUF bytes a pipe keeps
 * the write whole; a longer line is allocated and still written at once. */
void asyncrt__diag_vlog(const asyncrt_diag *d, int level, const char *fmt, va_list ap)
{
    if (!d || level > d->log_level) return;
    static const char prefix[] = "asyncrt: ";
    char small[1024], *line = small;
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(small + sizeof prefix - 1, sizeof small - sizeof prefix, fmt, ap);
    size_t size = n < 0 ? 0 : (size_t)n + sizeof prefix; /* prefix, text, newline */
    if (n >= 0 && size > sizeof small - 1 && (line = malloc(size + 1)))
        vsnprintf(line + sizeof prefix - 1, size + 1 - (sizeof prefix - 1), fmt, again);
    va_end(again);
    if (!line) { /* out of memory: the line cut short, still whole */
        line = small;
        size = sizeof small - 1;
    }
    if (n < 0) size = sizeof prefix; /* a bad format: the prefix and newline */
    memcpy(line, prefix, sizeof prefix - 1);
    line[size - 1] = '\n';
    fflush(stderr); /* what stdio holds of the program's own goes first */
    for (size_t done = 0; done < size;) {
        ssize_t w = write(fileno(stderr), line + done, size - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        done += (size_t)w;
    }
    if (line != small) free(line);
}

void asyncrt__diag_log(const asyncrt_diag *d, int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    asyncrt__diag_vlog(d, level, fmt, ap);
    va_end(ap);
}

double asyncrt__now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

const char *asyncrt__diag_last_error(asyncrt_diag *d)
{
    /* The lock guards the slot list; the message itself belongs to this
     * thread, and only this thread's next failure (or destroy) replaces it. */
    pthread_mutex_lock(&d->lock);
    asyncrt_error_slot *slot = *find_slot(d, this_thread());
    const char *message = slot && slot->message ? slot->message : "";
    pthread_mutex_unlock(&d->lock);
    return message;
}
