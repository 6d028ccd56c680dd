/* Shared by the built-in ops' steps: tuning text and source generation. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_util.h"
#include "diag.h" /* asyncrt__vformat */

int asyncrt__tune_next(const char **cursor, char key[16], char value[16], unsigned long *number, bool *is_number)
{
    const char *c = *cursor;
    if (!*c) return 0;
    int used = 0;
    if (sscanf(c, "%15[a-z0-9]=%15[a-z0-9]%n", key, value, &used) != 2) return -1;
    c += used;
    if (*c == ',' && c[1]) c++;
    else if (*c) return -1;
    char *end;
    *number = strtoul(value, &end, 10);
    *is_number = *end == 0 && end != value;
    *cursor = c;
    return 1;
}

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
