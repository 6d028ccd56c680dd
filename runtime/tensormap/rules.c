/* The rules of cuTensorMapEncodeTiled / cuTensorMapEncodeIm2col as the CUDA
 * 13.0 driver (580, H100) enforces them: those of cuda.h's comments that it
 * enforces, plus those it enforces without documenting (marked "driver" in
 * the messages and in tensormap/RULES.md), checked roughly in the order of
 * that comment so the first broken rule is the one reported. Each failure
 * names the parameter, its value and the rule.
 * tests/tensormap/tensormap_differential.c holds these against the real
 * driver (its --explore mode probes each undocumented boundary).
 *
 * Two more levels sit on top (see RULES.md): errors the driver does not
 * enforce (documented-only; skipped when predicting the driver's verdict)
 * and warnings (documented constraints and hazards the driver accepts),
 * collected only for descriptors without errors. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "format.h" /* ASYNCRT_PRINTF */
#include "sized.h"
#include "tensormap_rules.h"
#include "try.h"

#define TWO_POW_32 (UINT64_C(1) << 32)
#define TWO_POW_40 (UINT64_C(1) << 40)
/* The largest box the driver accepts, in shared-memory bytes: 228 KB, the
 * shared memory of an sm_90 SM (observed on H100: 233472 passes, 234624
 * fails). */
#define BOX_SMEM_MAX UINT64_C(233472)

static bool is_align16b(asyncrt_tensormap_dtype t)
{
    return t == ASYNCRT_TENSORMAP_DTYPE_16U4_ALIGN16B || t == ASYNCRT_TENSORMAP_DTYPE_16U6_ALIGN16B;
}

static bool is_packed(asyncrt_tensormap_dtype t)
{
    return t == ASYNCRT_TENSORMAP_DTYPE_16U4_ALIGN8B || is_align16b(t);
}

static bool is_atom_swizzle(asyncrt_tensormap_swizzle s)
{
    return s >= ASYNCRT_TENSORMAP_SWIZZLE_128B_ATOM_32B && s <= ASYNCRT_TENSORMAP_SWIZZLE_128B_ATOM_64B;
}

bool asyncrt__tensormap_dtype_is_float(asyncrt_tensormap_dtype t)
{
    switch (t) {
    case ASYNCRT_TENSORMAP_DTYPE_F16: case ASYNCRT_TENSORMAP_DTYPE_F32:
    case ASYNCRT_TENSORMAP_DTYPE_F64: case ASYNCRT_TENSORMAP_DTYPE_BF16:
    case ASYNCRT_TENSORMAP_DTYPE_F32_FTZ: case ASYNCRT_TENSORMAP_DTYPE_TF32:
    case ASYNCRT_TENSORMAP_DTYPE_TF32_FTZ:
        return true;
    default:
        return false;
    }
}

/* Swizzle span in bytes (0 for NONE). */
static unsigned swizzle_span(asyncrt_tensormap_swizzle s)
{
    switch (s) {
    case ASYNCRT_TENSORMAP_SWIZZLE_32B: return 32;
    case ASYNCRT_TENSORMAP_SWIZZLE_64B: return 64;
    case ASYNCRT_TENSORMAP_SWIZZLE_NONE: return 0;
    default: return 128;
    }
}

static asyncrt_status fail(const char **rule_out, const char *rule, char *msg, size_t size,
                           const char *fmt, ...) ASYNCRT_PRINTF(5, 6);
static asyncrt_status fail(const char **rule_out, const char *rule, char *msg, size_t size,
                           const char *fmt, ...)
{
    if (rule_out) *rule_out = rule;
    if (msg && size > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, size, fmt, ap);
        va_end(ap);
    }
    return ASYNCRT_ERROR_TENSORMAP_INVALID;
}

/* "N x 4 bytes = M bytes" or, for the packed types, "N x 4 bits = M bytes". */
static void size_text(char *buf, size_t size, asyncrt_tensormap_dtype t, uint64_t n)
{
    unsigned bits = asyncrt_tensormap_dtype_bits(t);
    if (bits % 8 == 0)
        snprintf(buf, size, "x %u bytes = %llu bytes", bits / 8,
                 (unsigned long long)asyncrt__tensormap_bytes_of(t, n));
    else
        snprintf(buf, size, "x %u bits = %g bytes", bits, (double)n * bits / 8.0);
}

#define FAIL(rule, ...) return fail(rule_out, rule, msg, msg_size, __VA_ARGS__)

static asyncrt_status check_enums(const asyncrt_tensormap_desc *d, const char **rule_out,
                                  char *msg, size_t msg_size)
{
    if ((unsigned)d->dtype >= ASYNCRT_TENSORMAP_DTYPE_COUNT)
        FAIL("dtype", "dtype (%d): not a CUtensorMapDataType; must be 0..%d (u8 .. 16u6_align16b)",
             (int)d->dtype, ASYNCRT_TENSORMAP_DTYPE_COUNT - 1);
    if ((unsigned)d->interleave >= ASYNCRT_TENSORMAP_INTERLEAVE_COUNT)
        FAIL("interleave", "interleave (%d): must be 0..2 (none, 16b, 32b)", (int)d->interleave);
    if ((unsigned)d->swizzle >= ASYNCRT_TENSORMAP_SWIZZLE_COUNT)
        FAIL("swizzle", "swizzle (%d): must be 0..6 (none, 32b, 64b, 128b, 128b_atom_32b, "
             "128b_atom_32b_flip_8b, 128b_atom_64b)", (int)d->swizzle);
    if ((unsigned)d->l2_promotion >= ASYNCRT_TENSORMAP_L2_PROMOTION_COUNT)
        FAIL("l2_promotion", "l2_promotion (%d): must be 0..3 (none, 64b, 128b, 256b)",
             (int)d->l2_promotion);
    if ((unsigned)d->oob_fill >= ASYNCRT_TENSORMAP_OOB_FILL_COUNT)
        FAIL("oob_fill", "oob_fill (%d): must be 0 (zero) or 1 (nan)", (int)d->oob_fill);
    return ASYNCRT_SUCCESS;
}

static asyncrt_status check_global(const asyncrt_tensormap_desc *d, const char **rule_out,
                                   char *msg, size_t msg_size)
{
    const char *tname = asyncrt_tensormap_dtype_name(d->dtype);
    bool il32 = d->interleave == ASYNCRT_TENSORMAP_INTERLEAVE_32B;

    if (d->address % 16 != 0)
        FAIL("address_align16", "address (0x%llx): must be 16-byte aligned",
             (unsigned long long)d->address);
    if (d->address % 32 != 0 && (il32 || is_align16b(d->dtype)))
        FAIL("address_align32", "address (0x%llx): must be 32-byte aligned when %s is %s",
             (unsigned long long)d->address, il32 ? "interleave" : "dtype", il32 ? "32B" : tname);

    for (uint32_t i = 0; i < d->rank; i++)
        if (d->global_dim[i] == 0 || d->global_dim[i] > TWO_POW_32)
            FAIL("global_dim_range", "global_dim[%u] (%llu): must be 1..2^32 (4294967296)", i,
                 (unsigned long long)d->global_dim[i]);
    if (is_align16b(d->dtype) && d->global_dim[0] % 128 != 0)
        FAIL("global_dim_packed", "global_dim[0] (%llu): must be a multiple of 128 when dtype is %s",
             (unsigned long long)d->global_dim[0], tname);
    if (d->dtype == ASYNCRT_TENSORMAP_DTYPE_16U4_ALIGN8B && d->global_dim[0] % 2 != 0)
        FAIL("global_dim_packed", "global_dim[0] (%llu): must be a multiple of 2 when dtype is %s",
             (unsigned long long)d->global_dim[0], tname);

    unsigned stride_align = il32 || is_align16b(d->dtype) ? 32 : 16;
    for (uint32_t i = 0; i + 1 < d->rank; i++) {
        unsigned long long s = d->global_stride[i];
        if (s % 16 != 0)
            FAIL("stride_align", "global_stride[%u] (%llu): must be a multiple of 16 bytes", i, s);
        if (s % stride_align != 0)
            FAIL("stride_align", "global_stride[%u] (%llu): must be a multiple of 32 bytes when %s is %s",
                 i, s, il32 ? "interleave" : "dtype", il32 ? "32B" : tname);
        if (s >= TWO_POW_40)
            FAIL("stride_max", "global_stride[%u] (%llu): must be less than 2^40 (1099511627776)", i, s);
    }
    /* cuda.h's pseudo-code has each stride cover the previous dimension, but
     * the driver does not check it (zero, equal and transposed strides are
     * accepted), so neither do we. */
    return ASYNCRT_SUCCESS;
}

/* The rules on the box's inner row: box_dim[0] (tiled) or channels_per_pixel
 * (im2col), named `what`. */
static asyncrt_status check_inner(const asyncrt_tensormap_desc *d, bool im2col, const char *what, uint32_t inner,
                                  const char **rule_out, char *msg, size_t msg_size)
{
    const char *tname = asyncrt_tensormap_dtype_name(d->dtype);
    uint64_t bits = (uint64_t)inner * asyncrt_tensormap_dtype_bits(d->dtype);
    char sz[64];
    size_text(sz, sizeof sz, d->dtype, inner);
    /* cuda.h says so for tiled maps with interleave NONE; the driver also
     * demands it with interleave, and of im2col's channels (observed). */
    if (bits % 128 != 0)
        FAIL("box_inner_multiple16", "%s (%u) %s: must be a multiple of 16%s", what, inner, sz,
             im2col ? " (enforced by the driver; cuda.h states it for tiled maps only)"
             : d->interleave == ASYNCRT_TENSORMAP_INTERLEAVE_NONE
                 ? " when interleave is NONE"
                 : " (with interleave too: enforced by the driver, not documented)");
    if (is_align16b(d->dtype) && inner != 128)
        FAIL("box_inner_packed128", "%s (%u): must be 128 when dtype is %s", what, inner, tname);
    return ASYNCRT_SUCCESS;
}

/* cuda.h: "When interleave is CU_TENSOR_MAP_INTERLEAVE_32B, swizzle must be
 * CU_TENSOR_MAP_SWIZZLE_32B". Driver 580 encodes any swizzle with it; on the
 * H100 (test_tensormap_swizzle_gpu) NONE, 64B and 128B then load other bytes
 * than 32B does, in a layout documented nowhere: an asyncrt-only error (the
 * differential test's driver prediction still accepts it). */
static bool il32_swizzle_broken(const asyncrt_tensormap_desc *d)
{
    return d->interleave == ASYNCRT_TENSORMAP_INTERLEAVE_32B && d->swizzle != ASYNCRT_TENSORMAP_SWIZZLE_32B;
}

#define IL32_SWIZZLE_TEXT                                                                             \
    "swizzle (%s) with interleave 32B: cuda.h requires swizzle 32b there; driver 580 encodes it, but on " \
    "the H100 the load then writes other bytes than with swizzle 32b, in a layout documented nowhere "   \
    "(documented, not enforced by the driver)"

static asyncrt_status check_layout(const asyncrt_tensormap_desc *d, const char *what, uint32_t inner,
                                   bool driver_only, const char **rule_out, char *msg, size_t msg_size)
{
    const char *tname = asyncrt_tensormap_dtype_name(d->dtype);
    const char *sname = asyncrt_tensormap_swizzle_name(d->swizzle);
    bool none = d->interleave == ASYNCRT_TENSORMAP_INTERLEAVE_NONE;

    /* cuda.h: element_stride[0] is ignored without interleave; the driver still range-checks it. */
    for (uint32_t i = 0; i < d->rank; i++)
        if (d->element_stride[i] == 0 || d->element_stride[i] > 8)
            FAIL("element_stride_range", "element_stride[%u] (%u): must be 1..8%s", i, d->element_stride[i],
                 i == 0 && none ? " (also when interleave is NONE, where TMA ignores it: enforced by "
                                  "the driver, not documented)" : "");

    /* cuda.h: 32B interleave needs SWIZZLE_32B. The driver accepts NONE, 32B,
     * 64B and 128B with it: an asyncrt-only error (see il32_swizzle_broken). */
    if (!driver_only && il32_swizzle_broken(d))
        FAIL("il32_swizzle", IL32_SWIZZLE_TEXT, sname);
    if (d->dtype == ASYNCRT_TENSORMAP_DTYPE_16U6_ALIGN16B && !none)
        FAIL("packed_interleave", "interleave (%s): must be none when dtype is %s",
             asyncrt_tensormap_interleave_name(d->interleave), tname);
    if (d->dtype == ASYNCRT_TENSORMAP_DTYPE_16U6_ALIGN16B &&
        !(d->swizzle == ASYNCRT_TENSORMAP_SWIZZLE_NONE || d->swizzle == ASYNCRT_TENSORMAP_SWIZZLE_128B ||
          d->swizzle == ASYNCRT_TENSORMAP_SWIZZLE_128B_ATOM_32B ||
          d->swizzle == ASYNCRT_TENSORMAP_SWIZZLE_128B_ATOM_64B))
        FAIL("packed_swizzle", "swizzle (%s): dtype %s supports only none, 128b, 128b_atom_32b and "
             "128b_atom_64b (store only)", sname, tname);
    if (d->dtype == ASYNCRT_TENSORMAP_DTYPE_16U4_ALIGN16B &&
        !(d->swizzle == ASYNCRT_TENSORMAP_SWIZZLE_NONE || d->swizzle == ASYNCRT_TENSORMAP_SWIZZLE_128B ||
          d->swizzle == ASYNCRT_TENSORMAP_SWIZZLE_128B_ATOM_32B))
        FAIL("packed_swizzle", "swizzle (%s): dtype %s supports only none, 128b and 128b_atom_32b "
             "(loads only)", sname, tname);
    if (none && d->swizzle != ASYNCRT_TENSORMAP_SWIZZLE_NONE) {
        /* Shared-memory bytes of the row (the ALIGN16B types, a byte per value, only reach
         * here with 128B swizzles and rows of 128). */
        uint64_t row = is_align16b(d->dtype) ? inner : asyncrt__tensormap_bytes_of(d->dtype, inner);
        unsigned span = swizzle_span(d->swizzle);
        if (row > span) {
            char sz[64];
            size_text(sz, sizeof sz, d->dtype, inner);
            FAIL("swizzle_span", "%s (%u) %s: must be at most %u bytes, the span of swizzle %s",
                 what, inner, sz, span, sname);
        }
    }
    if (d->oob_fill == ASYNCRT_TENSORMAP_OOB_FILL_NAN &&
        (!asyncrt__tensormap_dtype_is_float(d->dtype) || is_packed(d->dtype)))
        FAIL("oob_nan_float", "oob_fill (nan): NaN fill needs a floating-point dtype (f16, bf16, f32, "
             "f32_ftz, tf32, tf32_ftz, f64), not %s", tname);
    return ASYNCRT_SUCCESS;
}

/* The box must fit in shared memory (enforced by the driver, not documented).
 * The driver counts box_dim[i] / element_stride[i] elements per dimension,
 * rounded DOWN, element_stride[0] included (a dimension with box < stride
 * counts 0, so such a box always passes); im2col counts channels_per_pixel x
 * pixels_per_column. */
static asyncrt_status check_smem(const asyncrt_tensormap_desc *d, const asyncrt_tensormap_im2col_desc *im2col,
                                 const char **rule_out, char *msg, size_t msg_size)
{
    if (im2col) {
        uint64_t bytes = asyncrt__tensormap_bytes_of(d->dtype, im2col->channels_per_pixel) *
                         im2col->pixels_per_column;
        if (bytes > BOX_SMEM_MAX)
            FAIL("box_smem", "channels_per_pixel (%u) x pixels_per_column (%u) x %s = %llu bytes: the box "
                 "must fit in %llu bytes of shared memory (enforced by the driver, not documented)",
                 im2col->channels_per_pixel, im2col->pixels_per_column, asyncrt_tensormap_dtype_name(d->dtype),
                 (unsigned long long)bytes, (unsigned long long)BOX_SMEM_MAX);
        return ASYNCRT_SUCCESS;
    }
    uint64_t elems = 1;
    char terms[160] = "";
    size_t used = 0;
    for (uint32_t i = 0; i < d->rank; i++) {
        uint64_t n = d->box_dim[i] / d->element_stride[i];
        if (i > 0) elems *= n; /* <= 256^4: no overflow */
        if (used < sizeof terms)
            used += (size_t)snprintf(terms + used, sizeof terms - used, "%s%u/%u", i ? " x " : "",
                                     d->box_dim[i], d->element_stride[i]);
    }
    uint64_t bytes = asyncrt__tensormap_bytes_of(d->dtype, d->box_dim[0] / d->element_stride[0]) * elems;
    if (bytes > BOX_SMEM_MAX)
        FAIL("box_smem", "box_dim / element_stride (%s, each rounded down) = %llu elements of %s = %llu "
             "bytes: the box must fit in %llu bytes of shared memory (enforced by the driver, not "
             "documented)", terms, (unsigned long long)(d->box_dim[0] / d->element_stride[0] * elems),
             asyncrt_tensormap_dtype_name(d->dtype), (unsigned long long)bytes, (unsigned long long)BOX_SMEM_MAX);
    return ASYNCRT_SUCCESS;
}

static asyncrt_status check_sm(const asyncrt_tensormap_desc *d, int sm, const char **rule_out,
                               char *msg, size_t msg_size)
{
    if (sm == 0 || sm >= 100) return ASYNCRT_SUCCESS;
    if (is_atom_swizzle(d->swizzle))
        FAIL("sm_swizzle", "swizzle (%s): needs sm_100 or newer (target is sm_%d)",
             asyncrt_tensormap_swizzle_name(d->swizzle), sm);
    if (is_packed(d->dtype))
        FAIL("sm_dtype", "dtype (%s): needs sm_100 or newer (target is sm_%d)",
             asyncrt_tensormap_dtype_name(d->dtype), sm);
    return ASYNCRT_SUCCESS;
}

static asyncrt_status check_im2col(const asyncrt_tensormap_im2col_desc *c, const char **rule_out,
                                   char *msg, size_t msg_size)
{
    const asyncrt_tensormap_desc *d = &c->tiled;
    uint32_t spatial = d->rank - 2;
    int limit = d->rank == 3 ? 32768 : d->rank == 4 ? 128 : 16;
    for (uint32_t i = 0; i < spatial; i++) {
        if (c->lower_corner[i] < -limit || c->lower_corner[i] > limit - 1)
            FAIL("corner_range", "lower_corner[%u] (%d): must be %d..%d for rank %u", i,
                 c->lower_corner[i], -limit, limit - 1, d->rank);
        if (c->upper_corner[i] < -limit || c->upper_corner[i] > limit - 1)
            FAIL("corner_range", "upper_corner[%u] (%d): must be %d..%d for rank %u", i,
                 c->upper_corner[i], -limit, limit - 1, d->rank);
    }
    /* The pixel box must not be empty. With interleave the driver checks
     * corner i against global_dim[i], not global_dim[i + 1] (observed on
     * driver 580: an empty box passes, a non-empty one fails when
     * global_dim[i] - lower + upper < 1); we check what it checks. */
    unsigned shift = d->interleave == ASYNCRT_TENSORMAP_INTERLEAVE_NONE ? 1 : 0;
    for (uint32_t i = 0; i < spatial; i++) {
        uint32_t j = i + shift;
        long long extent = (long long)d->global_dim[j] - c->lower_corner[i] + c->upper_corner[i];
        if (extent < 1)
            FAIL("corner_area", "global_dim[%u] (%llu) - lower_corner[%u] (%d) + upper_corner[%u] (%d) = %lld: "
                 "must be at least 1 (%s)", j, (unsigned long long)d->global_dim[j], i, c->lower_corner[i], i,
                 c->upper_corner[i], extent,
                 shift ? "the pixel box must have non-zero area"
                       : "with interleave the driver checks corner i against global_dim[i], not the spatial "
                         "global_dim[i + 1]: enforced by the driver, not documented");
    }
    if (c->channels_per_pixel == 0 || c->channels_per_pixel > 256)
        FAIL("channels_range", "channels_per_pixel (%u): must be 1..256", c->channels_per_pixel);
    if (c->pixels_per_column == 0 || c->pixels_per_column > 1024)
        FAIL("pixels_range", "pixels_per_column (%u): must be 1..1024", c->pixels_per_column);
    return ASYNCRT_SUCCESS;
}

static asyncrt_status check_errors(const asyncrt_tensormap_desc *d, const asyncrt_tensormap_im2col_desc *im2col,
                                   int sm, bool driver_only, const char **rule_out, char *msg, size_t msg_size)
{
    if (rule_out) *rule_out = NULL;
    if (msg && msg_size > 0) msg[0] = '\0';
    if (!d) {
        if (rule_out) *rule_out = "null";
        if (msg && msg_size > 0) snprintf(msg, msg_size, "the descriptor is NULL");
        return ASYNCRT_ERROR_INVALID_ARGUMENT;
    }
    /* Documented (cuda.h: "Tensor map objects are only supported on devices
     * of compute capability 9.0 or higher"); whether the driver refuses to
     * encode for such a device is not known, so the prediction skips it. */
    if (!driver_only && sm != 0 && sm < 90)
        FAIL("sm_tma", "target sm_%d: tensor maps (TMA) need compute capability 9.0 or newer", sm);
    ASYNCRT_TRY(check_enums(d, rule_out, msg, msg_size));
    if (im2col && (d->rank < 3 || d->rank > ASYNCRT_TENSORMAP_MAX_RANK))
        FAIL("rank", "rank (%u): must be 3..5 for im2col", d->rank);
    if (d->rank < 1 || d->rank > ASYNCRT_TENSORMAP_MAX_RANK)
        FAIL("rank", "rank (%u): must be 1..5", d->rank);
    if (d->interleave != ASYNCRT_TENSORMAP_INTERLEAVE_NONE && d->rank < 3)
        FAIL("rank_interleave", "rank (%u): must be at least 3 when interleave is %s", d->rank,
             d->interleave == ASYNCRT_TENSORMAP_INTERLEAVE_16B ? "16B" : "32B");
    ASYNCRT_TRY(check_global(d, rule_out, msg, msg_size));

    const char *what = "box_dim[0]";
    uint32_t inner = d->box_dim[0];
    if (im2col) {
        ASYNCRT_TRY(check_im2col(im2col, rule_out, msg, msg_size));
        what = "channels_per_pixel";
        inner = im2col->channels_per_pixel;
    } else {
        for (uint32_t i = 0; i < d->rank; i++)
            if (d->box_dim[i] == 0 || d->box_dim[i] > 256)
                FAIL("box_dim_range", "box_dim[%u] (%u): must be 1..256", i, d->box_dim[i]);
    }
    ASYNCRT_TRY(check_inner(d, im2col != NULL, what, inner, rule_out, msg, msg_size));
    ASYNCRT_TRY(check_layout(d, what, inner, driver_only, rule_out, msg, msg_size));
    ASYNCRT_TRY(check_smem(d, im2col, rule_out, msg, msg_size));
    return check_sm(d, sm, rule_out, msg, msg_size);
}

asyncrt_status asyncrt__tensormap_check(const asyncrt_tensormap_desc *d,
                                       const asyncrt_tensormap_im2col_desc *im2col, int sm,
                                       const char **rule_out, char *msg, size_t msg_size)
{
    return check_errors(d, im2col, sm, false, rule_out, msg, msg_size);
}

asyncrt_status asyncrt__tensormap_predict_driver(const asyncrt_tensormap_desc *d,
                                                const asyncrt_tensormap_im2col_desc *im2col, int sm,
                                                const char **rule_out, char *msg, size_t msg_size)
{
    return check_errors(d, im2col, sm, true, rule_out, msg, msg_size);
}

/* ---- warnings: only for descriptors without errors ---------------------- */

static void warn(asyncrt_tensormap_report *r, const char *rule, const char *fmt, ...)
    ASYNCRT_PRINTF(3, 4);
static void warn(asyncrt_tensormap_report *r, const char *rule, const char *fmt, ...)
{
    if (r->warning_count < ASYNCRT_TENSORMAP_MAX_WARNINGS) {
        asyncrt_tensormap_finding *f = &r->warnings[r->warning_count];
        f->rule = rule;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(f->message, sizeof f->message, fmt, ap);
        va_end(ap);
    }
    r->warning_count++;
}

/* Shared-memory bytes of one box as a kernel receives it (element strides
 * rounded up, element_stride[0] ignored without interleave). */
static uint64_t box_smem_bytes(const asyncrt_tensormap_desc *d, const asyncrt_tensormap_im2col_desc *im2col)
{
    if (im2col)
        return asyncrt__tensormap_bytes_of(d->dtype, im2col->channels_per_pixel) * im2col->pixels_per_column;
    return asyncrt_tensormap_box_bytes(d);
}

void asyncrt__tensormap_collect_warnings(const asyncrt_tensormap_desc *d,
                                        const asyncrt_tensormap_im2col_desc *im2col,
                                        uint64_t smem_per_block, asyncrt_tensormap_report *r)
{
    /* TMA stores clip dimension 0 to the row's 16-byte granules, not to elements. */
    uint64_t row = asyncrt__tensormap_bytes_of(d->dtype, d->global_dim[0]);
    if (d->interleave == ASYNCRT_TENSORMAP_INTERLEAVE_NONE && row % 16 != 0) {
        char sz[64];
        size_text(sz, sizeof sz, d->dtype, d->global_dim[0]);
        warn(r, "row_bytes16", "global_dim[0] (%llu) %s per row: not a multiple of 16, so a TMA store "
             "that reaches the end of a row also writes the bytes up to the row's next 16-byte boundary "
             "(observed on the H100; PyTorch and CUTLASS refuse such tensors for TMA)",
             (unsigned long long)d->global_dim[0], sz);
    }
    uint64_t box = box_smem_bytes(d, im2col);
    if (smem_per_block > 0 && box > smem_per_block)
        warn(r, "box_smem_device", "the box takes %llu bytes of shared memory: the driver accepts up to "
             "%llu, but this device gives a block at most %llu, so no kernel on it can receive the box",
             (unsigned long long)box, (unsigned long long)BOX_SMEM_MAX, (unsigned long long)smem_per_block);
}

asyncrt_status asyncrt_tensormap_validate(const asyncrt_tensormap_desc *desc, char *msg, size_t msg_size)
{
    return asyncrt__tensormap_check(desc, NULL, 0, NULL, msg, msg_size);
}

asyncrt_status asyncrt_tensormap_validate_for_sm(const asyncrt_tensormap_desc *desc, int sm, char *msg,
                                                 size_t msg_size)
{
    return asyncrt__tensormap_check(desc, NULL, sm, NULL, msg, msg_size);
}

asyncrt_status asyncrt_tensormap_validate_im2col(const asyncrt_tensormap_im2col_desc *desc, char *msg,
                                                 size_t msg_size)
{
    return asyncrt__tensormap_check(desc ? &desc->tiled : NULL, desc, 0, NULL, msg, msg_size);
}

asyncrt_status asyncrt__tensormap_analyze_im2col_or_tiled(const asyncrt_tensormap_desc *d,
                                                        const asyncrt_tensormap_im2col_desc *im2col,
                                                        const asyncrt_tensormap_check_options *opts,
                                                        asyncrt_tensormap_report *r)
{
    static const asyncrt_tensormap_check_options defaults = ASYNCRT_TENSORMAP_CHECK_OPTIONS_INIT;
    if (!r) return ASYNCRT_ERROR_INVALID_ARGUMENT;
    *r = (asyncrt_tensormap_report)ASYNCRT_TENSORMAP_REPORT_INIT;
    if (!opts) opts = &defaults;
    ASYNCRT_TRY(asyncrt__tensormap_check(d, im2col, opts->sm, &r->error.rule, r->error.message,
                                         sizeof r->error.message));
    asyncrt__tensormap_collect_warnings(d, im2col, opts->smem_per_block, r);
    if (opts->warnings_as_errors && r->warning_count > 0) {
        r->error = r->warnings[0];
        return ASYNCRT_ERROR_TENSORMAP_INVALID;
    }
    return ASYNCRT_SUCCESS;
}

/* The public face: the caller's options and report, read and written by
 * their sizes (sized.h). Options of a size refused are reported as the
 * error of rule "struct_size"; a report of a size refused cannot say why. */
static asyncrt_status analyze_sized(const asyncrt_tensormap_desc *d, const asyncrt_tensormap_im2col_desc *im2col,
                                    const asyncrt_tensormap_check_options *opts, asyncrt_tensormap_report *report)
{
    asyncrt_tensormap_report full = ASYNCRT_TENSORMAP_REPORT_INIT;
    asyncrt_tensormap_check_options o = ASYNCRT_TENSORMAP_CHECK_OPTIONS_INIT;
    char why[ASYNCRT_SIZED_WHY];
    if (!report || !asyncrt__sized_out(ASYNCRT_SIZED_TENSORMAP_REPORT, report, &full, why))
        return ASYNCRT_ERROR_INVALID_ARGUMENT;
    asyncrt_status s = ASYNCRT_ERROR_INVALID_ARGUMENT;
    if (!opts || asyncrt__sized_in(ASYNCRT_SIZED_TENSORMAP_CHECK_OPTIONS, opts, &o, why)) {
        s = asyncrt__tensormap_analyze_im2col_or_tiled(d, im2col, &o, &full);
    } else {
        full.error.rule = "struct_size";
        snprintf(full.error.message, sizeof full.error.message, "%s", why);
    }
    asyncrt__sized_out(ASYNCRT_SIZED_TENSORMAP_REPORT, report, &full, why);
    return s;
}

asyncrt_status asyncrt_tensormap_analyze(const asyncrt_tensormap_desc *desc,
                                         const asyncrt_tensormap_check_options *opts,
                                         asyncrt_tensormap_report *report)
{
    return analyze_sized(desc, NULL, opts, report);
}

asyncrt_status asyncrt_tensormap_analyze_im2col(const asyncrt_tensormap_im2col_desc *desc,
                                                const asyncrt_tensormap_check_options *opts,
                                                asyncrt_tensormap_report *report)
{
    return analyze_sized(desc ? &desc->tiled : NULL, desc, opts, report);
}
