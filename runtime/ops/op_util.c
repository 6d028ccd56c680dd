/* Shared by the built-in ops' steps: tuning text (the string builder is base/strbuf.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_util.h"

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
