/* The rule checker behind asyncrt_tensormap_validate*, shared with the
 * differential test, which needs to know which rule fired (not installed). */
#ifndef ASYNCRT_TENSORMAP_RULES_H
#define ASYNCRT_TENSORMAP_RULES_H

#include "asyncrt/tensormap.h"

/* Checks `d` (tiled), or `im2col` when it is not NULL (then d must be
 * &im2col->tiled). sm = 0 skips the architecture rules. On failure *rule
 * (when rule is not NULL) is set to a short stable rule id such as
 * "box_inner_multiple16"; on success to NULL. */
asyncrt_status asyncrt__tensormap_check(const asyncrt_tensormap_desc *d,
                                       const asyncrt_tensormap_im2col_desc *im2col, int sm,
                                       const char **rule, char *msg, size_t msg_size);

/* Only the rules the driver enforces: its predicted verdict (the
 * differential test's side). asyncrt__tensormap_check adds the
 * documented-only errors (sm_tma, and il32_swizzle when switched on). */
asyncrt_status asyncrt__tensormap_predict_driver(const asyncrt_tensormap_desc *d,
                                                const asyncrt_tensormap_im2col_desc *im2col, int sm,
                                                const char **rule, char *msg, size_t msg_size);

/* Appends the warnings of a descriptor that passed asyncrt__tensormap_check
 * to r (smem_per_block 0: the device's limit is unknown). */
void asyncrt__tensormap_collect_warnings(const asyncrt_tensormap_desc *d,
                                        const asyncrt_tensormap_im2col_desc *im2col,
                                        uint64_t smem_per_block, asyncrt_tensormap_report *r);

/* asyncrt_tensormap_analyze (im2col NULL) or _analyze_im2col (d = &im2col->tiled). */
asyncrt_status asyncrt__tensormap_analyze_im2col_or_tiled(const asyncrt_tensormap_desc *d,
                                                        const asyncrt_tensormap_im2col_desc *im2col,
                                                        const asyncrt_tensormap_check_options *opts,
                                                        asyncrt_tensormap_report *r);

/* The driver defect of bit 85 (tensormap/RULES.md, "Small tensors on
 * Blackwell"): bytes from the map's address to the end of its last element
 * (saturating), whether a map needs the fix, and the fix itself. */
uint64_t asyncrt__tensormap_span_bytes(const asyncrt_tensormap_desc *d);
bool asyncrt__tensormap_needs_small_tensor_fix(int sm, int driver_version, uint64_t span_bytes);
void asyncrt__tensormap_apply_small_tensor_fix(asyncrt_tensor_map *map);
bool asyncrt__tensormap_bit85(const asyncrt_tensor_map *map);

/* Bytes of `count` elements of dtype in global memory (packed: count x bits / 8, rounded up). */
uint64_t asyncrt__tensormap_bytes_of(asyncrt_tensormap_dtype dtype, uint64_t count);

bool asyncrt__tensormap_dtype_is_float(asyncrt_tensormap_dtype dtype);

#endif
