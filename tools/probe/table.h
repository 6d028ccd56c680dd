/* An aligned text table: cells are formatted as they are set, and columns
 * are padded to their widest cell when printed. */
#ifndef ASYNCRT_PROBE_TABLE_H
#define ASYNCRT_PROBE_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct probe_table {
    size_t cols, rows, capacity;
    char **cells; /* rows x cols, NULL = empty */
    bool failed;  /* out of memory: print says so */
} probe_table;

void table_init(probe_table *t, size_t cols);
void table_free(probe_table *t);
size_t table_add_row(probe_table *t); /* returns its index */
void table_set(probe_table *t, size_t row, size_t col, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void table_print(const probe_table *t, FILE *f);

#endif
