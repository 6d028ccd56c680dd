/* malloc'd printf, for the library's messages and paths (and, through
 * base_internal.h, for tools and tests). */
#ifndef ASYNCRT_FORMAT_H
#define ASYNCRT_FORMAT_H

#include <stdarg.h>

/* NULL on allocation failure. */
char *asyncrt__format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *asyncrt__vformat(const char *fmt, va_list ap);

/* snprintf into buf, truncating on purpose (paths in messages and
 * candidates): what does not fit is cut, and the compiler is not asked to
 * prove it fits. */
#include <stddef.h>
void asyncrt__say(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* asyncrt__say, then false: a refusal as one statement,
 * `return asyncrt__refuse(why, why_size, "...", ...);`. */
#include <stdbool.h>
bool asyncrt__refuse(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
