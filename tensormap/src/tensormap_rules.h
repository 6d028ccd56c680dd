/* The rule checker behind asyncrt_tensormap_validate*, shared with the
 * differential test, which needs to know which rule fired (not installed). */
#ifndef ASYNCRT_TENSORMAP_RULES_H
#define ASYNCRT_TENSORMAP_RULES_H

#include "asyncrt/tensormap.h"

/* Checks `d` (tiled), or `im2col` when it is not NULL (then d must be
 * &im2col->tiled). sm = 0 skips the architecture rules. On failure *rule
 * (when rule is not NULL) is set to a short stable rule id such as
 * "box_inner_multiple16"; on success to NULL. */
asyncrt_status asyncrt_tensormap_check(const asyncrt_tensormap_desc *d,
                                       const asyncrt_tensormap_im2col_desc *im2col, int sm,
                                       const char **rule, char *msg, size_t msg_size);

/* Bytes of `count` elements of dtype in global memory (packed: count x bits / 8, rounded up). */
uint64_t asyncrt_tensormap_bytes_of(asyncrt_tensormap_dtype dtype, uint64_t count);

bool asyncrt_tensormap_dtype_is_float(asyncrt_tensormap_dtype dtype);

#endif
