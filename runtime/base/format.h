/* malloc'd printf, for the library's messages and paths (and, through
 * base_internal.h, for tools and tests). */
#ifndef ASYNCRT_FORMAT_H
#define ASYNCRT_FORMAT_H

#include <stdarg.h>

/* printf-style format checking where the compiler has it (GCC, clang: the
 * one GNU extension the runtime's portable C11 keeps, behind this macro);
 * nothing elsewhere. */
#if defined(__GNUC__)
#define ASYNCRT_PRINTF(format_index, first_arg) __attribute__((format(printf, format_index, first_arg)))
#else
#define ASYNCRT_PRINTF(format_index, first_arg)
#endif

/* NULL on allocation failure. */
char *asyncrt__format(const char *fmt, ...) ASYNCRT_PRINTF(1, 2);
char *asyncrt__vformat(const char *fmt, va_list ap);

/* snprintf into buf, truncating on purpose (paths in messages and
 * candidates): what does not fit is cut, and the compiler is not asked to
 * prove it fits. */
#include <stddef.h>
void asyncrt__say(char *buf, size_t size, const char *fmt, ...) ASYNCRT_PRINTF(3, 4);
/* asyncrt__say, then false: a refusal as one statement,
 * `return asyncrt__refuse(why, why_size, "...", ...);`. */
#include <stdbool.h>
bool asyncrt__refuse(char *buf, size_t size, const char *fmt, ...) ASYNCRT_PRINTF(3, 4);

#endif
