/* compact_why.h */
#include "compact_why.h"

#include <stdarg.h>
#include <stdio.h>

bool asyncrt__why(char *why, size_t why_size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (why_size) vsnprintf(why, why_size, fmt, ap);
    va_end(ap);
    return false;
}
