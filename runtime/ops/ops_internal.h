/* What tests may use of the ops layer, beside the public API (asyncrt/ops.h,
 * asyncrt/tile_ops.h; asyncrt-bench uses asyncrt_calibrate and
 * asyncrt_op_path_parse). Internal, not libasyncrt's
 * ABI: it is linked from asyncrt_private and may change with the library.
 *   dispatch.h: the path choice (asyncrt__dispatch_choose), the calibration
 *     file's form (parse, format, path), and measuring and saving one
 *     (asyncrt_calibrate). */
#ifndef ASYNCRT_OPS_INTERNAL_H
#define ASYNCRT_OPS_INTERNAL_H

#include "dispatch.h"

#endif
