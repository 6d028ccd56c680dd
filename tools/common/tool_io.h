/* The checked file I/O for the tools: runtime/base/safe_io.c, compiled into
 * asyncrt_tool_common under these names (shared_names.h), never copied, so a
 * tool reads and writes files as the library does (no symlink followed, sizes
 * bounded before a byte is read, atomic writes). */
#ifndef ASYNCRT_TOOL_IO_H
#define ASYNCRT_TOOL_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Files larger than this are refused (safe_io.h's ASYNCRT_FILE_MAX). */
#define TOOL_FILE_MAX ((size_t)256 << 20)

/* A regular file of 1..max bytes at path (relative to dir_fd, as openat;
 * AT_FDCWD for a plain path), never through a symlink or from a FIFO; NULL
 * when refused or absent (why "" when it simply is not there). */
unsigned char *tool_file_read(int dir_fd, const char *path, size_t max, bool touch, size_t *size, char *why,
                              size_t why_size);

/* Writes data to path atomically (a temporary, then rename). False with errno set. */
bool tool_file_write(int dir_fd, const char *path, const unsigned char *data, size_t size, mode_t mode);

#endif
