/* malloc'd printf (format.h). */
#include "format.h"

#include <stdio.h>
#include <stdlib.h>

char *asyncrt__vformat(const char *fmt, va_list ap)
{
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    if (n < 0) return NULL;
    char *s = malloc((size_t)n + 1);
    if (s) vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

char *asyncrt__format(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = asyncrt__vformat(fmt, ap);
    va_end(ap);
    return s;
}

void asyncrt__say(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, size, fmt, ap);
    va_end(ap);
}

bool asyncrt__refuse(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return false;
}
