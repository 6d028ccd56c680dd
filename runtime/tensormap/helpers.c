/* Descriptor helpers: dense tensors, swizzle choice, box size, dumps. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "format.h" /* ASYNCRT_PRINTF */
#include "tensormap_rules.h"

asyncrt_status asyncrt_tensormap_describe_dense(asyncrt_tensormap_desc *out,
                                                asyncrt_tensormap_dtype dtype,
                                                asyncrt_deviceptr address, uint32_t rank,
                                                const uint64_t *shape, const uint32_t *box)
{
    if (!out || !shape || !box || rank < 1 || rank > ASYNCRT_TENSORMAP_MAX_RANK)
        return ASYNCRT_ERROR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    out->dtype = dtype;
    out->rank = rank;
    out->address = address;
    for (uint32_t i = 0; i < rank; i++) {
        out->global_dim[i] = shape[rank - 1 - i]; /* numpy order -> innermost first */
        out->box_dim[i] = box[rank - 1 - i];
        out->element_stride[i] = 1;
    }
    uint64_t stride = asyncrt__tensormap_bytes_of(dtype, out->global_dim[0]);
    for (uint32_t i = 0; i + 1 < rank; i++) {
        out->global_stride[i] = stride;
        uint64_t next = out->global_dim[i + 1];
        stride = next != 0 && stride > UINT64_MAX / next ? UINT64_MAX : stride * next;
    }
    return ASYNCRT_SUCCESS;
}

asyncrt_tensormap_swizzle asyncrt_tensormap_widest_swizzle(asyncrt_tensormap_dtype dtype,
                                                           uint32_t inner_box)
{
    bool align16b = dtype == ASYNCRT_TENSORMAP_DTYPE_16U4_ALIGN16B ||
                    dtype == ASYNCRT_TENSORMAP_DTYPE_16U6_ALIGN16B;
    if (asyncrt_tensormap_dtype_bits(dtype) == 0) return ASYNCRT_TENSORMAP_SWIZZLE_NONE;
    uint64_t row = align16b ? inner_box : asyncrt__tensormap_bytes_of(dtype, inner_box);
    switch (row) {
    case 32: return align16b ? ASYNCRT_TENSORMAP_SWIZZLE_NONE : ASYNCRT_TENSORMAP_SWIZZLE_32B;
    case 64: return align16b ? ASYNCRT_TENSORMAP_SWIZZLE_NONE : ASYNCRT_TENSORMAP_SWIZZLE_64B;
    case 128: return ASYNCRT_TENSORMAP_SWIZZLE_128B;
    default: return ASYNCRT_TENSORMAP_SWIZZLE_NONE;
    }
}

size_t asyncrt_tensormap_box_bytes(const asyncrt_tensormap_desc *d)
{
    if (!d || d->rank < 1 || d->rank > ASYNCRT_TENSORMAP_MAX_RANK ||
        asyncrt_tensormap_dtype_bits(d->dtype) == 0)
        return 0;
    uint64_t count = 1;
    for (uint32_t i = 0; i < d->rank; i++) {
        uint32_t es = d->element_stride[i];
        if (i == 0 && d->interleave == ASYNCRT_TENSORMAP_INTERLEAVE_NONE) es = 1;
        if (es == 0 || d->box_dim[i] == 0) return 0;
        count *= (d->box_dim[i] + es - 1) / es; /* at most 256^5 = 2^40 */
    }
    if (d->dtype == ASYNCRT_TENSORMAP_DTYPE_16U4_ALIGN16B ||
        d->dtype == ASYNCRT_TENSORMAP_DTYPE_16U6_ALIGN16B)
        return (size_t)count; /* 16 values take 16 bytes in shared memory */
    return (size_t)asyncrt__tensormap_bytes_of(d->dtype, count);
}

/* ---- dumps --------------------------------------------------------------- */

typedef struct text {
    char *buf;
    size_t size, len;
} text;

static void add(text *t, const char *fmt, ...) ASYNCRT_PRINTF(2, 3);
static void add(text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t room = t->len < t->size ? t->size - t->len : 0;
    int n = vsnprintf(room ? t->buf + t->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n > 0) t->len += (size_t)n;
}

static const char *or_unknown(const char *name)
{
    return name ? name : "?";
}

static void add_u64s(text *t, const char *name, const uint64_t *v, uint32_t n, const char *unit)
{
    add(t, "%s = {", name);
    for (uint32_t i = 0; i < n; i++) add(t, "%s%llu", i ? ", " : "", (unsigned long long)v[i]);
    add(t, "}%s\n", unit);
}

static void add_u32s(text *t, const char *name, const uint32_t *v, uint32_t n)
{
    add(t, "%s = {", name);
    for (uint32_t i = 0; i < n; i++) add(t, "%s%u", i ? ", " : "", v[i]);
    add(t, "}\n");
}

static void dump_common(text *t, const asyncrt_tensormap_desc *d, bool with_box)
{
    uint32_t rank = d->rank <= ASYNCRT_TENSORMAP_MAX_RANK ? d->rank : ASYNCRT_TENSORMAP_MAX_RANK;
    add(t, "dtype = %s (%d)\n", or_unknown(asyncrt_tensormap_dtype_name(d->dtype)), (int)d->dtype);
    add(t, "rank = %u\n", d->rank);
    add(t, "address = 0x%llx\n", (unsigned long long)d->address);
    add_u64s(t, "global_dim", d->global_dim, rank, " (innermost first)");
    add_u64s(t, "global_stride", d->global_stride, rank ? rank - 1 : 0, " bytes");
    if (with_box) add_u32s(t, "box_dim", d->box_dim, rank);
    add_u32s(t, "element_stride", d->element_stride, rank);
    add(t, "interleave = %s (%d)\n", or_unknown(asyncrt_tensormap_interleave_name(d->interleave)),
        (int)d->interleave);
    add(t, "swizzle = %s (%d)\n", or_unknown(asyncrt_tensormap_swizzle_name(d->swizzle)),
        (int)d->swizzle);
    add(t, "l2_promotion = %s (%d)\n",
        or_unknown(asyncrt_tensormap_l2_promotion_name(d->l2_promotion)), (int)d->l2_promotion);
    add(t, "oob_fill = %s (%d)\n", or_unknown(asyncrt_tensormap_oob_fill_name(d->oob_fill)),
        (int)d->oob_fill);
}

static size_t finish(text *t)
{
    if (t->size > 0) t->buf[t->len < t->size ? t->len : t->size - 1] = '\0';
    return t->len;
}

size_t asyncrt_tensormap_dump(const asyncrt_tensormap_desc *desc, char *buf, size_t size)
{
    text t = {buf, size, 0};
    if (size > 0) buf[0] = '\0';
    if (!desc) {
        add(&t, "(null descriptor)\n");
        return finish(&t);
    }
    dump_common(&t, desc, true);
    return finish(&t);
}

size_t asyncrt_tensormap_dump_im2col(const asyncrt_tensormap_im2col_desc *desc, char *buf, size_t size)
{
    text t = {buf, size, 0};
    if (size > 0) buf[0] = '\0';
    if (!desc) {
        add(&t, "(null descriptor)\n");
        return finish(&t);
    }
    dump_common(&t, &desc->tiled, false);
    uint32_t spatial = desc->tiled.rank >= 3 && desc->tiled.rank <= 5 ? desc->tiled.rank - 2 : 3;
    add(&t, "lower_corner = {");
    for (uint32_t i = 0; i < spatial; i++) add(&t, "%s%d", i ? ", " : "", desc->lower_corner[i]);
    add(&t, "} (W, H, D)\nupper_corner = {");
    for (uint32_t i = 0; i < spatial; i++) add(&t, "%s%d", i ? ", " : "", desc->upper_corner[i]);
    add(&t, "} (W, H, D)\nchannels_per_pixel = %u\npixels_per_column = %u\n",
        desc->channels_per_pixel, desc->pixels_per_column);
    return finish(&t);
}
