/* A growable string, for text built piece by piece: generated kernel
 * sources (ops/op_map.c, op_tile.c) and explanations (compile/explain_report.c).
 * A failed allocation marks it failed and later pieces are dropped, so a
 * caller checks once, at the end. */
#ifndef ASYNCRT_STRBUF_H
#define ASYNCRT_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

#include "format.h" /* ASYNCRT_PRINTF */

typedef struct asyncrt_strbuf {
    char *data;
    size_t len, cap;
    bool failed; /* an allocation failed: data is incomplete */
} asyncrt_strbuf;

void asyncrt__sb_printf(asyncrt_strbuf *b, const char *fmt, ...) ASYNCRT_PRINTF(2, 3);
/* The number of the line the next character goes on. */
unsigned asyncrt__sb_lines(const asyncrt_strbuf *b);
/* The text (malloc'd, "" when nothing was put), or NULL when an allocation
 * failed (then freed); b is left empty. */
char *asyncrt__sb_take(asyncrt_strbuf *b);

#endif
