/* asyncrt_strbuf (strbuf.h). */
#include "strbuf.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void asyncrt__sb_printf(asyncrt_strbuf *b, const char *fmt, ...)
{
    if (b->failed) return;
    va_list ap;
    va_start(ap, fmt);
    char *s = asyncrt__vformat(fmt, ap);
    va_end(ap);
    size_t n = s ? strlen(s) : 0;
    if (s && b->len + n + 1 > b->cap) {
        size_t cap = (b->len + n + 1) * 2;
        char *grown = realloc(b->data, cap);
        if (grown) {
            b->data = grown;
            b->cap = cap;
        } else {
            free(s);
            s = NULL;
        }
    }
    if (!s) {
        b->failed = true;
        return;
    }
    memcpy(b->data + b->len, s, n + 1);
    b->len += n;
    free(s);
}

unsigned asyncrt__sb_lines(const asyncrt_strbuf *b)
{
    unsigned lines = 1;
    for (size_t i = 0; i < b->len; i++) lines += b->data[i] == '\n';
    return lines;
}

char *asyncrt__sb_take(asyncrt_strbuf *b)
{
    char *text = b->failed ? NULL : b->data ? b->data : calloc(1, 1);
    if (b->failed) free(b->data);
    *b = (asyncrt_strbuf){0};
    return text;
}
