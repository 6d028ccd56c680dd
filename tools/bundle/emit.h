/* What asyncrt-bundle writes: the bundle's bytes, as a file or as C data. */
#ifndef ASYNCRT_BUNDLE_EMIT_H
#define ASYNCRT_BUNDLE_EMIT_H

#include <stdbool.h>
#include <stddef.h>

/* The command line, recorded in the bundle as its note (malloc'd; NULL when
 * out of memory), so that a missing header's message says how it was made. */
char *emit_note(int argc, char **argv);

/* Writes the bytes, or with c_format a C source defining
 *   const unsigned char SYMBOL[]; const size_t SYMBOL_size;
 * atomically to path. 0 or the exit code (printed why). */
int emit_write(const char *path, const unsigned char *bytes, size_t size, bool c_format, const char *symbol);

bool emit_symbol_ok(const char *symbol);

/* 0 when path names nothing or a regular file (what -o may replace), else
 * TOOL_EXIT_USAGE with a message naming what it is: a symbolic link, a
 * device, a FIFO, a directory are never replaced. */
int emit_target_check(const char *path);

#endif
