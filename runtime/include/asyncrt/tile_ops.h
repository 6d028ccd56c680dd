/* asyncrt built-in 2D tile ops: transpose, a 2D tile map, and stencils.
 *
 * Matrices are dense and row-major (rows x cols elements, row pitch = cols),
 * of f32, i32, u32, f16 or bf16, of any shape. Like asyncrt_map, each op is
 * generated from kernels_src/tile_*.cuh for one path and compiled once
 * through the program cache:
 *   TMA     cp.async.bulk.tensor loads and stores through tensor maps, ring
 *           of mbarrier-completed stages (sm_90+); the stencil's halo and
 *           zero border come from the tensor map's out-of-bounds fill
 *   LDGSTS  16-byte cp.async into shared memory (sm_80+)
 *   plain   16-byte vector loads and stores (any arch)
 * chosen like asyncrt_map: ASYNCRT_PATH_AUTO lets $ASYNCRT_PATH, this
 * device's calibration, the built-in table of measured winners or the
 * target decide (docs/library.md, "Which path an op takes"); forcing a path the
 * target or device cannot run gives ASYNCRT_ERROR_UNSUPPORTED. A tensor map needs 16-byte aligned base
 * addresses and row pitches (cols x element size a multiple of 16 bytes);
 * a TMA-path launch whose matrices break that runs the LDGSTS kernel instead
 * (asyncrt_tile_launch_path says which). On every path such matrices move
 * element by element at the edges of the work, so they are slower. */
#ifndef ASYNCRT_TILE_OPS_H
#define ASYNCRT_TILE_OPS_H

#include <stddef.h>

#include "asyncrt/ops.h"
#include "asyncrt/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ASYNCRT_TILE_MAX_RADIUS 4

typedef enum asyncrt_tile_kind {
    /* out[y][x] = f(in[y][x]); out is rows x cols. */
    ASYNCRT_TILE_MAP = 0,
    /* out[x][y] = f(in[y][x]); out is cols x rows. f defaults to the identity. */
    ASYNCRT_TILE_TRANSPOSE,
    /* out[y][x] = sum over |dy|, |dx| <= radius of
     * weights[dy + r][dx + r] * in[y + dy][x + dx], or an expression over
     * in(dy, dx); elements outside the matrix read as zero. */
    ASYNCRT_TILE_STENCIL
} asyncrt_tile_kind;

typedef struct asyncrt_tile_desc {
    /* Set it with ASYNCRT_TILE_DESC_INIT (or .size = sizeof(asyncrt_tile_desc)): the
     * library reads only the fields this size covers (docs/deployment.md, "ABI and versioning"). */
    size_t size;
    asyncrt_tile_kind kind;
    asyncrt_dtype dtype; /* of both matrices: F32, I32, U32, F16 or BF16 */
    /* C++ statements that set `out`. MAP and TRANSPOSE see `v` (the value of
     * in[y][x]), `y`, `x`, `rows`, `cols` (ints; the input's shape), e.g.
     * "out = 2 * v + y;". STENCIL sees in(dy, dx) (needs |dy|, |dx| <=
     * radius), y, x, rows, cols, e.g. "out = in(-1, 0) + in(1, 0);". Values
     * are computed as in asyncrt_map: f16 and bf16 as float. NULL: the
     * identity for TRANSPOSE, the weights for STENCIL. */
    const char *expression;
    int radius;            /* STENCIL: 1..ASYNCRT_TILE_MAX_RADIUS */
    /* STENCIL without an expression (float dtypes only): (2r+1) x (2r+1)
     * values, row-major, weights[(dy + r) * (2r + 1) + dx + r]; copied. Each
     * output sums its terms in that order with fused multiply-adds, from 0. */
    const float *weights;
    asyncrt_op_path path; /* as in asyncrt_map_desc */
    const char *arch;      /* as in asyncrt_map_desc */
} asyncrt_tile_desc;
#define ASYNCRT_TILE_DESC_INIT ASYNCRT_SIZED_INIT(asyncrt_tile_desc)

typedef struct asyncrt_tile_op asyncrt_tile_op;

/* Validates, generates and compiles the kernel(s), and loads them when a
 * device is open. A bad expression gives ASYNCRT_ERROR_COMPILE with NVRTC's
 * errors, which name it as "tile expression(LINE)". *out is NULL on failure. */
ASYNCRT_EXTERN asyncrt_status asyncrt_tile_create(asyncrt_context *ctx, const asyncrt_tile_desc *desc, asyncrt_tile_op **out);
ASYNCRT_EXTERN void asyncrt_tile_destroy(asyncrt_tile_op *op); /* NULL is fine */

/* The path the op was built for, never ASYNCRT_PATH_AUTO. */
ASYNCRT_EXTERN asyncrt_op_path asyncrt_tile_path_of(const asyncrt_tile_op *op);
/* The path a launch with these arguments takes: the op's path, except LDGSTS
 * for a TMA op whose matrices break the tensor-map rules above. */
ASYNCRT_EXTERN asyncrt_op_path asyncrt_tile_launch_path(const asyncrt_tile_op *op, size_t rows, size_t cols,
                                          asyncrt_deviceptr in, asyncrt_deviceptr out);
/* The compiled program and the generated source, owned by the op. */
ASYNCRT_EXTERN const asyncrt_program *asyncrt_tile_program(const asyncrt_tile_op *op);
ASYNCRT_EXTERN const char *asyncrt_tile_source(const asyncrt_tile_op *op);

/* Runs the op on the rows x cols matrix at `in`, writing `out` (cols x rows
 * for TRANSPOSE). Both are device pointers aligned to the element size; they
 * must not overlap (except MAP, which may run in place). rows, cols <=
 * 2^31 - 1; either 0 launches nothing. */
ASYNCRT_EXTERN asyncrt_status asyncrt_tile_launch(asyncrt_tile_op *op, size_t rows, size_t cols, asyncrt_deviceptr in,
                                   asyncrt_deviceptr out, asyncrt_stream stream);

#ifdef __cplusplus
}
#endif
#endif
