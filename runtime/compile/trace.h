/* The headers one NVRTC compile read, from its -fdevice-time-trace file: a
 * Chrome trace whose "Processing Header File" events name each header in
 * args.detail (absolute for -I/--include-path/absolute includes, relative to
 * the process's working directory for quoted ones, the bare name for
 * in-memory headers). NVRTC's builtin header is always the first; a trace
 * without it is refused, since then the list cannot be trusted. */
#ifndef ASYNCRT_TRACE_H
#define ASYNCRT_TRACE_H

#include <stdbool.h>
#include <stddef.h>

#define ASYNCRT_NVRTC_BUILTIN_HEADER "__nv_nvrtc_builtin_header.h"

typedef struct asyncrt_trace_headers {
    char **paths; /* in trace order, builtin header excluded, duplicates removed */
    size_t count;
} asyncrt_trace_headers;

/* Parses a trace (json, size bytes, need not be NUL-terminated). False with
 * a reason for malformed JSON, a missing event list or builtin header, except
 * with from_pch: a compile that used a precompiled header traces only what
 * it read after it (the builtin header, maybe nothing), and the caller adds
 * what the PCH holds (pch.h). */
bool asyncrt__trace_parse(const char *json, size_t size, bool from_pch, asyncrt_trace_headers *out, char *why,
                          size_t why_size);
void asyncrt__trace_headers_free(asyncrt_trace_headers *h);
/* Appends path (taking it) unless listed; false when out of memory (path freed). */
bool asyncrt__trace_headers_add(asyncrt_trace_headers *h, char *path);

#endif
