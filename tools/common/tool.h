/* What the four tools share: usage-error and --version lines, the mapping
 * of library statuses to exit codes, and JSON strings that are always valid
 * UTF-8. */
#ifndef ASYNCRT_TOOL_COMMON_H
#define ASYNCRT_TOOL_COMMON_H

#include <stdio.h>

#include "asyncrt/runtime.h"
#include "exit_codes.h"

/* Prints "TOOL: error: MESSAGE (see TOOL --help)" on stderr, once, and
 * returns TOOL_EXIT_USAGE. */
int tool_usage_error(const char *tool, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "asyncrt-run 0.3.0 (libasyncrt 0.3.0, NVRTC 13.0)" */
void tool_version_line(const char *tool, char *buf, size_t size);

/* The NVRTCs the library's search found (asyncrt_nvrtc_candidate_get), one
 * line each after `indent`: a '*' on the chosen one, its version, path,
 * where it was found and what told its version. asyncrt-probe and
 * asyncrt-run -v print them alike. */
void tool_print_nvrtc_candidates(FILE *f, const char *indent, const asyncrt_nvrtc_candidate *candidates,
                                 size_t count, int chosen);
/* The search's candidates into out (at most capacity), through the public
 * calls; returns how many were written. */
size_t tool_nvrtc_candidates(asyncrt_nvrtc_candidate *out, size_t capacity);

/* "13.0" for 13000; "none" for 0. */
void tool_format_cuda_version(int version, char *buf, size_t size);

/* The exit code for a library status. */
int tool_exit_for_status(asyncrt_status s);

/* A JSON string literal for s. Control characters are escaped; bytes that are
 * not part of a valid UTF-8 sequence (stray continuation bytes, overlong
 * forms, surrogates, code points above U+10FFFF, truncated sequences) are
 * written as \ufffd, one per byte, so the output is always valid JSON. */
void tool_json_string(FILE *out, const char *s);

/* What a tool's --json prints when it fails before its document:
 * {"tool": ..., "version": ..., "error": message, "exit_code": code}. */
void tool_json_error(FILE *out, const char *tool, const char *message, int code);

#endif
