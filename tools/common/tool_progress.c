/* The tools' status line (tool_progress.h). One mutex guards the latest event
 * and the terminal: the ticker draws under it, end() clears under it, so a
 * line is never half drawn when the tool writes next. */
#define _DEFAULT_SOURCE /* TIOCGWINSZ */
#include "tool_progress.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define FIRST_DRAW_MS 500 /* a call shorter than this draws nothing */
#define TICK_MS 100       /* redraws: the elapsed time's tenths */

struct tool_progress {
    pthread_mutex_t lock;
    pthread_cond_t wake;     /* on CLOCK_MONOTONIC: end() wakes the ticker */
    pthread_t ticker;
    bool running, stop, drawn, told;
    struct timespec begun;
    char prefix[32];
    asyncrt_progress_event last; /* its strings point at the copies below */
    char source[256], arch[32];
    long long headers;       /* a bundle's headers read so far, -1 before any */
};

static double since_ms(const struct timespec *t)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - t->tv_sec) * 1e3 + (double)(now.tv_nsec - t->tv_nsec) / 1e6;
}

void tool_progress_text(const char *prefix, const asyncrt_progress_event *e, long long headers, char *buf,
                        size_t size)
{
    char read[48] = "";
    if (headers >= 0) snprintf(read, sizeof read, " (%lld header%s read)", headers, headers == 1 ? "" : "s");
    switch (e->phase) {
    case ASYNCRT_PROGRESS_CACHE_LOOKUP:
        snprintf(buf, size, "%slooking up %s for %s in the cache%s", prefix, e->source_name, e->arch, read);
        break;
    case ASYNCRT_PROGRESS_COMPILE:
        snprintf(buf, size, "%scompiling %s for %s%s", prefix, e->source_name, e->arch, read);
        break;
    case ASYNCRT_PROGRESS_LINK:
        snprintf(buf, size, "%slinking %s for %s", prefix, e->source_name, e->arch);
        break;
    case ASYNCRT_PROGRESS_LOAD:
        snprintf(buf, size, "%sloading %s (%s) on the device", prefix, e->source_name, e->arch);
        break;
    case ASYNCRT_PROGRESS_BUNDLE_HEADER:
        snprintf(buf, size, "%s%lld header%s read, from %s for %s", prefix, e->count, e->count == 1 ? "" : "s",
                 e->source_name, e->arch);
        break;
    default: /* a phase added after this tool was built */
        snprintf(buf, size, "%sworking on %s for %s", prefix, e->source_name, e->arch);
    }
}

/* Writes all of it, as one write where the terminal takes it. */
static void put(const char *text, size_t n)
{
    while (n) {
        ssize_t w = write(STDERR_FILENO, text, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return;
        text += w, n -= (size_t)w;
    }
}

/* Under the lock: the line, cut to the terminal's width (a wrapped line
 * would not be cleared by "\r\033[K"), over the one drawn before. */
static void draw(tool_progress *p)
{
    char text[512], line[600];
    tool_progress_text(p->prefix, &p->last, p->headers, text, sizeof text);
    struct winsize ws;
    size_t cols = ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 8 ? ws.ws_col : 80;
    int n = snprintf(line, sizeof line, "\r%s ... %.1f s", text, since_ms(&p->begun) / 1e3);
    size_t len = n < 0 ? 0 : (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
    if (len > cols) len = cols; /* "\r" and cols - 1 characters: the cursor stays on the line */
    memcpy(line + len, "\033[K", 4);
    put(line, len + 3);
    p->drawn = true;
}

static void *tick(void *arg)
{
    tool_progress *p = arg;
    pthread_mutex_lock(&p->lock);
    while (!p->stop) {
        double waited = since_ms(&p->begun);
        double next = waited < FIRST_DRAW_MS ? FIRST_DRAW_MS - waited : TICK_MS;
        struct timespec at;
        clock_gettime(CLOCK_MONOTONIC, &at);
        long long ns = at.tv_nsec + (long long)(next * 1e6);
        at.tv_sec += (time_t)(ns / 1000000000), at.tv_nsec = (long)(ns % 1000000000);
        while (!p->stop && pthread_cond_timedwait(&p->wake, &p->lock, &at) == 0) {
        }
        if (!p->stop && p->told && since_ms(&p->begun) >= FIRST_DRAW_MS) draw(p);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

static void on_event(const asyncrt_progress_event *e, void *user)
{
    tool_progress *p = user;
    if (!p || !e) return;
    size_t known = e->size < sizeof *e ? e->size : sizeof *e; /* a library older or newer than this tool */
    pthread_mutex_lock(&p->lock);
    asyncrt_progress_event copy = {.count = -1};
    memcpy(&copy, e, known);
    snprintf(p->source, sizeof p->source, "%s", copy.source_name ? copy.source_name : "");
    snprintf(p->arch, sizeof p->arch, "%s", copy.arch ? copy.arch : "");
    copy.source_name = p->source;
    copy.arch = p->arch;
    if (copy.phase == ASYNCRT_PROGRESS_BUNDLE_HEADER) p->headers = copy.count;
    p->last = copy;
    p->told = true;
    pthread_mutex_unlock(&p->lock);
}

asyncrt_progress_fn tool_progress_fn(const tool_progress *p) { return p ? on_event : NULL; }

tool_progress *tool_progress_new(const asyncrt_context *ctx, const char *prefix, bool quiet)
{
    const char *term = getenv("TERM"), *log = NULL;
    if (ctx) asyncrt_context_setting(ctx, "ASYNCRT_LOG", &log);
    bool log_on = log && (!strcmp(log, "1") || !strcmp(log, "2")); /* the library's reading of it */
    if (quiet || log_on || !isatty(STDERR_FILENO) || (term && !strcmp(term, "dumb"))) return NULL;
    tool_progress *p = calloc(1, sizeof *p);
    pthread_condattr_t attr;
    bool ok = p && pthread_condattr_init(&attr) == 0;
    if (ok) {
        ok = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) == 0 && pthread_cond_init(&p->wake, &attr) == 0;
        pthread_condattr_destroy(&attr);
    }
    if (ok && pthread_mutex_init(&p->lock, NULL) != 0) {
        pthread_cond_destroy(&p->wake);
        ok = false;
    }
    if (!ok) { /* no line, as on a pipe: it is only a courtesy */
        free(p);
        return NULL;
    }
    snprintf(p->prefix, sizeof p->prefix, "%s", prefix ? prefix : "");
    return p;
}

void tool_progress_begin(tool_progress *p)
{
    if (!p || p->running) return;
    clock_gettime(CLOCK_MONOTONIC, &p->begun);
    p->stop = p->drawn = p->told = false;
    p->headers = -1;
    p->running = pthread_create(&p->ticker, NULL, tick, p) == 0;
}

void tool_progress_end(tool_progress *p)
{
    if (!p || !p->running) return;
    pthread_mutex_lock(&p->lock);
    p->stop = true;
    pthread_cond_signal(&p->wake);
    pthread_mutex_unlock(&p->lock);
    pthread_join(p->ticker, NULL);
    p->running = false;
    if (p->drawn) put("\r\033[K", 4);
    p->drawn = false;
}

void tool_progress_free(tool_progress *p)
{
    if (!p) return;
    tool_progress_end(p);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->lock);
    free(p);
}
