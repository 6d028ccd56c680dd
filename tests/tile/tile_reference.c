/* CPU references of the tile ops (see tile_reference.h). */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "test_support.h"
#include "tile_reference.h"

double ref_load(asyncrt_dtype t, const void *m, size_t i, int64_t *as_int)
{
    *as_int = 0;
    switch (t) {
    case ASYNCRT_F32: return ((const float *)m)[i];
    case ASYNCRT_F16: return test_f16_to_float(((const uint16_t *)m)[i]);
    case ASYNCRT_BF16: return test_bf16_to_float(((const uint16_t *)m)[i]);
    case ASYNCRT_I32: return (double)(*as_int = ((const int32_t *)m)[i]);
    case ASYNCRT_U32: return (double)(*as_int = ((const uint32_t *)m)[i]);
    default: return 0;
    }
}

void ref_store_float(asyncrt_dtype t, void *m, size_t i, float v)
{
    if (t == ASYNCRT_F32) ((float *)m)[i] = v;
    else if (t == ASYNCRT_F16) ((uint16_t *)m)[i] = test_float_to_f16(v);
    else if (t == ASYNCRT_BF16) ((uint16_t *)m)[i] = test_float_to_bf16(v);
}

void ref_store_int(asyncrt_dtype t, void *m, size_t i, int64_t v)
{
    if (t == ASYNCRT_I32) ((uint32_t *)m)[i] = (uint32_t)v;
    else ((uint32_t *)m)[i] = (uint32_t)v;
}

static bool is_int(asyncrt_dtype t) { return t == ASYNCRT_I32 || t == ASYNCRT_U32; }

void ref_tile_map(asyncrt_tile_kind kind, bool identity, asyncrt_dtype t, size_t rows, size_t cols, const void *in,
                  void *out)
{
    bool tr = kind == ASYNCRT_TILE_TRANSPOSE;
    for (size_t y = 0; y < rows; y++)
        for (size_t x = 0; x < cols; x++) {
            size_t i = y * cols + x, o = tr ? x * rows + y : i;
            int64_t n;
            double v = ref_load(t, in, i, &n);
            int64_t k = (int64_t)(y * 7 + x);
            if (is_int(t)) ref_store_int(t, out, o, identity ? n : n * 2 + k);
            else ref_store_float(t, out, o, identity ? (float)v : (float)v * 2.0f + (float)k);
        }
}

/* Element (y, x) as float or int, zero outside. */
static double at(asyncrt_dtype t, size_t rows, size_t cols, const void *in, long y, long x, int64_t *n)
{
    *n = 0;
    if (y < 0 || x < 0 || (size_t)y >= rows || (size_t)x >= cols) return 0;
    return ref_load(t, in, (size_t)y * cols + (size_t)x, n);
}

void ref_stencil_weights(asyncrt_dtype t, int r, const float *w, size_t rows, size_t cols, const void *in, void *out)
{
    int side = 2 * r + 1;
    for (long y = 0; y < (long)rows; y++)
        for (long x = 0; x < (long)cols; x++) {
            float acc = 0.0f;
            int64_t n;
            for (int dy = -r; dy <= r; dy++)
                for (int dx = -r; dx <= r; dx++)
                    acc = fmaf(w[(dy + r) * side + dx + r], (float)at(t, rows, cols, in, y + dy, x + dx, &n), acc);
            ref_store_float(t, out, (size_t)y * cols + (size_t)x, acc);
        }
}

void ref_stencil_expression(asyncrt_dtype t, int r, size_t rows, size_t cols, const void *in, void *out)
{
    for (long y = 0; y < (long)rows; y++)
        for (long x = 0; x < (long)cols; x++) {
            int64_t a, b, c;
            double fa = at(t, rows, cols, in, y, x, &a), fb = at(t, rows, cols, in, y - r, x + r, &b),
                   fc = at(t, rows, cols, in, y + r - 1, x - r, &c);
            size_t o = (size_t)y * cols + (size_t)x;
            if (is_int(t)) ref_store_int(t, out, o, a * 2 + b + c);
            else ref_store_float(t, out, o, ((float)fa * 2.0f + (float)fb) + (float)fc);
        }
}
