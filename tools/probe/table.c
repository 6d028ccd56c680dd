/* The aligned text table. */
#include "table.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void table_init(probe_table *t, size_t cols)
{
    memset(t, 0, sizeof *t);
    t->cols = cols;
}

void table_free(probe_table *t)
{
    for (size_t i = 0; i < t->rows * t->cols; i++) free(t->cells[i]);
    free(t->cells);
    memset(t, 0, sizeof *t);
}

size_t table_add_row(probe_table *t)
{
    if (t->rows == t->capacity) {
        size_t capacity = t->capacity ? t->capacity * 2 : 16;
        char **cells = realloc(t->cells, capacity * t->cols * sizeof *cells);
        if (!cells) {
            t->failed = true;
            return t->rows ? t->rows - 1 : 0;
        }
        t->cells = cells;
        t->capacity = capacity;
    }
    memset(t->cells + t->rows * t->cols, 0, t->cols * sizeof *t->cells);
    return t->rows++;
}

void table_set(probe_table *t, size_t row, size_t col, const char *fmt, ...)
{
    if (row >= t->rows || col >= t->cols) return;
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *text = len >= 0 ? malloc((size_t)len + 1) : NULL;
    if (!text) {
        t->failed = true;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(text, (size_t)len + 1, fmt, ap);
    va_end(ap);
    for (char *p = text; *p; p++) /* one cell, one line */
        if ((unsigned char)*p < 0x20) *p = ' ';
    free(t->cells[row * t->cols + col]);
    t->cells[row * t->cols + col] = text;
}

void table_print(const probe_table *t, FILE *f)
{
    if (t->failed) {
        fputs("(out of memory while building this table)\n", f);
        return;
    }
    size_t width[64] = {0};
    size_t cols = t->cols < 64 ? t->cols : 64;
    for (size_t r = 0; r < t->rows; r++)
        for (size_t c = 0; c < cols; c++) {
            const char *cell = t->cells[r * t->cols + c];
            size_t len = cell ? strlen(cell) : 0;
            if (len > width[c]) width[c] = len;
        }
    for (size_t r = 0; r < t->rows; r++) {
        size_t last = 0; /* no trailing blanks */
        for (size_t c = 0; c < cols; c++)
            if (t->cells[r * t->cols + c]) last = c;
        for (size_t c = 0; c <= last; c++) {
            const char *cell = t->cells[r * t->cols + c];
            if (c == last)
                fputs(cell ? cell : "", f);
            else
                fprintf(f, "%-*s  ", (int)width[c], cell ? cell : "");
        }
        fputc('\n', f);
    }
}
