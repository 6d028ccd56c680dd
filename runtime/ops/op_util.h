/* Pieces the built-in ops (op_map.c, op_tile.c) share: choosing the path
 * (TMA, LDGSTS, plain) for a target and device, and a growable string for
 * generating kernel sources. */
#ifndef ASYNCRT_OP_UTIL_H
#define ASYNCRT_OP_UTIL_H

#include <stdbool.h>
#include <stddef.h>

#include "asyncrt/ops.h"
#include "arch.h"

/* Resolves the target (`arch_text`: NULL/"auto" or explicit) and the path:
 * AUTO defers to $ASYNCRT_PATH, then to the dispatcher (dispatch.h: this
 * device's calibration, the built-in table of measured winners, the
 * target's newest path) for `dispatch_op` (an asyncrt_dispatch_op). A path
 * the target or the open device cannot run gives ASYNCRT_ERROR_UNSUPPORTED;
 * `op` names the op in messages. The choice and its reason are logged at
 * ASYNCRT_LOG=1. */
asyncrt_status asyncrt__op_select_for(asyncrt_context *ctx, const char *op, int dispatch_op, asyncrt_map_path wanted,
                                     const char *arch_text, asyncrt_arch *arch, char *arch_name,
                                     size_t arch_name_size, asyncrt_map_path *out);
/* The same, "map" being asyncrt_map and anything else the transpose. */
asyncrt_status asyncrt__op_select(asyncrt_context *ctx, const char *op, asyncrt_map_path wanted,
                                 const char *arch_text, asyncrt_arch *arch, char *arch_name,
                                 size_t arch_name_size, asyncrt_map_path *out);

/* The next key=value of a tuning knob's "k1=v1,k2=v2" text at *cursor
 * (keys and values [a-z0-9], up to 15 characters each; no trailing
 * comma): 1 and the pair (and the value as a number, if it is one), 0 at
 * the end, -1 if malformed. */
int asyncrt__tune_next(const char **cursor, char key[16], char value[16], unsigned long *number, bool *is_number);

typedef struct asyncrt_strbuf {
    char *data;
    size_t len, cap;
    bool failed; /* an allocation failed: data is incomplete */
} asyncrt_strbuf;

void asyncrt__sb_printf(asyncrt_strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The number of the line the next character goes on. */
unsigned asyncrt__sb_lines(const asyncrt_strbuf *b);

#endif
