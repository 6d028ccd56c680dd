/* Pieces the built-in ops' steps (op_map.c, op_tile.c) share: reading a
 * tuning knob's text; strbuf.h's growable string for generating kernel sources. */
#ifndef ASYNCRT_OP_UTIL_H
#define ASYNCRT_OP_UTIL_H

#include <stdbool.h>
#include <stddef.h>

#include "strbuf.h" /* asyncrt_strbuf, for generating kernel sources */

/* The next key=value of a tuning knob's "k1=v1,k2=v2" text at *cursor
 * (keys and values [a-z0-9], up to 15 characters each; no trailing
 * comma): 1 and the pair (and the value as a number, if it is one), 0 at
 * the end, -1 if malformed. */
int asyncrt__tune_next(const char **cursor, char key[16], char value[16], unsigned long *number, bool *is_number);

#endif
