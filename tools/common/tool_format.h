/* malloc'd printf and refusals for the tools: runtime/base/format.c, compiled
 * into asyncrt_tool_common under these names (shared_names.h), never copied. */
#ifndef ASYNCRT_TOOL_FORMAT_H
#define ASYNCRT_TOOL_FORMAT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

/* NULL on allocation failure. */
char *tool_format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *tool_vformat(const char *fmt, va_list ap);
/* snprintf into buf, truncating on purpose. */
void tool_say(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* tool_say, then false: `return tool_refuse(why, why_size, "...", ...);`. */
bool tool_refuse(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
