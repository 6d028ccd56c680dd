/* CPU references of the tile ops, bit for bit: the same arithmetic in the
 * same order as the kernels (f16 and bf16 computed as float, rounded to
 * nearest even when stored). */
#ifndef ASYNCRT_TILE_REFERENCE_H
#define ASYNCRT_TILE_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

#include "asyncrt/asyncrt.h"


/* Element i of a matrix of dtype as the kernels compute with it (ints are
 * returned in `*as_int` too), and a computed value stored back. */
double ref_load(asyncrt_dtype t, const void *m, size_t i, int64_t *as_int);
void ref_store_float(asyncrt_dtype t, void *m, size_t i, float v);
void ref_store_int(asyncrt_dtype t, void *m, size_t i, int64_t v);

/* The tests' map expression "out = v * 2 + (y * 7 + x);" (MAP) or the
 * identity (TRANSPOSE), over a rows x cols matrix. */
void ref_tile_map(asyncrt_tile_kind kind, bool identity, asyncrt_dtype t, size_t rows, size_t cols, const void *in,
                  void *out);

/* The weighted stencil, and the tests' expression stencil
 * "out = in(0, 0) * 2 + in(-R, R) + in(R - 1, -R);". */
void ref_stencil_weights(asyncrt_dtype t, int r, const float *w, size_t rows, size_t cols, const void *in, void *out);
void ref_stencil_expression(asyncrt_dtype t, int r, size_t rows, size_t cols, const void *in, void *out);

#endif
