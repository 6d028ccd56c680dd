/* The status line the tools draw on stderr while a compile, link or bundle
 * runs (docs/tools.md, "Progress"): the library tells its progress callback
 * each phase (asyncrt/runtime.h, "progress"); this holds the latest, and a
 * ticker thread draws it once the call has taken 0.5 s, redrawing it in
 * place ("\r") with the elapsed time, until the call returns and the line is
 * cleared ("\r\033[K"). Only on a terminal, and never with --quiet. */
#ifndef ASYNCRT_TOOL_PROGRESS_H
#define ASYNCRT_TOOL_PROGRESS_H

#include <stdbool.h>

#include "asyncrt/runtime.h"

typedef struct tool_progress tool_progress;

/* A status line whose text starts with `prefix` ("" for none), or NULL when
 * none is drawn: `quiet`, stderr not a terminal (isatty(2)), TERM=dumb, or
 * ctx's ASYNCRT_LOG on (the library's own lines on stderr would cut into
 * it; a tool that raises the level itself passes quiet). NULL is a valid
 * argument to every call below, which then does nothing. */
tool_progress *tool_progress_new(const asyncrt_context *ctx, const char *prefix, bool quiet);
void tool_progress_free(tool_progress *p);

/* What goes into the options: the callback (NULL for a NULL p, so that the
 * library tells nothing), and p as its user pointer. Thread-safe: a batch
 * tells it from its pool threads. */
asyncrt_progress_fn tool_progress_fn(const tool_progress *p);

/* Around one library call: begin starts the clock and the ticker; end stops
 * the ticker and clears the line if it was drawn, so that whatever the tool
 * writes next starts on a clean line. */
void tool_progress_begin(tool_progress *p);
void tool_progress_end(tool_progress *p);

/* The line for the latest event, without the elapsed time, into buf (for the
 * tests; the ticker draws this). */
void tool_progress_text(const char *prefix, const asyncrt_progress_event *e, long long headers, char *buf,
                        size_t size);

#endif
