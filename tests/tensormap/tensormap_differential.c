/* tensormap_differential: asyncrt's tensor-map rules against the real driver.
 *
 *   tensormap_differential [--cases N] [--seed S] [--quiet] [--dry-run [--sm SM]] [--list]
 *   tensormap_differential --explore [--dry-run]
 *
 * Generates N (default 20000) random parameter sets, valid and invalid, over
 * every dtype, rank, swizzle and interleave, tiled and (15%) im2col. Each one
 * starts from a valid descriptor and usually gets one "mutation" that puts
 * one parameter just inside or just outside one rule's limit, so both sides
 * of every rule are exercised. Each set goes to asyncrt__tensormap_predict_driver
 * (with the device's sm: the errors the driver enforces, not asyncrt's
 * documented-only ones) and to cuTensorMapEncodeTiled/Im2col; the verdicts
 * must agree. Warnings never count: a table shows, per warning rule, how
 * often the driver accepted such a case (it should be every time). Every disagreement is printed with the rule that fired, the mutation
 * and all parameters; then a table per mutation and per rule, and the totals.
 * Exits 1 on any disagreement, 77 (skipped) without a device.
 *
 * Needs only the driver and an open device (no kernel). Addresses are offsets
 * into a real allocation, in case the driver looks at them. --dry-run needs
 * neither: it takes validate's verdict for the driver's, to show on a machine
 * without a GPU how the cases spread over the rules (--sm, default 90).
 * --list prints every case on one line (parameters and both verdicts) for
 * offline analysis. --explore instead runs fixed probes that put one
 * parameter on each side of every boundary the driver enforces without
 * documenting it (tensormap/RULES.md), printing the driver's and validate's
 * verdicts side by side; run it first on a new driver. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "tensormap_rules.h"
#include "test_support.h"

#define TWO_POW_32 (UINT64_C(1) << 32)
#define TWO_POW_40 (UINT64_C(1) << 40)
#define T(name) ASYNCRT_TENSORMAP_DTYPE_##name
#define SW(name) ASYNCRT_TENSORMAP_SWIZZLE_##name
#define IL(name) ASYNCRT_TENSORMAP_INTERLEAVE_##name

static uint64_t g_rng;

static uint32_t rnd(uint32_t n) /* uniform-ish in [0, n) */
{
    g_rng ^= g_rng >> 12;
    g_rng ^= g_rng << 25;
    g_rng ^= g_rng >> 27;
    uint64_t r = g_rng * 0x2545F4914F6CDD1Dull;
    return n ? (uint32_t)((r >> 32) % n) : 0;
}

static bool chance(unsigned percent)
{
    return rnd(100) < percent;
}

static bool is_align16b(asyncrt_tensormap_dtype t)
{
    return t == T(16U4_ALIGN16B) || t == T(16U6_ALIGN16B);
}

static bool is_packed(asyncrt_tensormap_dtype t)
{
    return t == T(16U4_ALIGN8B) || is_align16b(t);
}

static uint64_t round_up(uint64_t v, uint64_t a)
{
    return (v + a - 1) / a * a;
}

static unsigned span_of(asyncrt_tensormap_swizzle s)
{
    return s == SW(NONE) ? 0 : s == SW(32B) ? 32 : s == SW(64B) ? 64 : 128;
}

/* Elements per 16 bytes of a non-ALIGN16B dtype. */
static unsigned per_chunk(asyncrt_tensormap_dtype t)
{
    return 128 / asyncrt_tensormap_dtype_bits(t);
}

static unsigned stride_align(const asyncrt_tensormap_desc *d)
{
    return d->interleave == IL(32B) || is_align16b(d->dtype) ? 32 : 16;
}

static uint32_t pick_box(void)
{
    uint32_t r = rnd(10);
    return r < 4 ? 1 + rnd(16) : r < 6 ? 1 : r < 8 ? 256 : 1 + rnd(256);
}

static uint64_t pick_dim(void)
{
    uint32_t r = rnd(20);
    return r < 10 ? 1 + rnd(64) : r < 15 ? 1 + rnd(4096) : r < 17 ? 1 : 1 + rnd(1u << 20);
}

/* Dense-with-padding strides; false if they reach 2^40. */
static bool derive_strides(asyncrt_tensormap_desc *d)
{
    uint64_t a = stride_align(d);
    uint64_t s = round_up(asyncrt__tensormap_bytes_of(d->dtype, d->global_dim[0]), a);
    for (uint32_t i = 0; i + 1 < d->rank; i++) {
        s += chance(25) ? a * rnd(4) : 0;
        if (s >= TWO_POW_40) return false;
        d->global_stride[i] = s;
        uint64_t next = d->global_dim[i + 1];
        if (next && s > TWO_POW_40 / next) return false;
        s = round_up(s * next, a);
    }
    return true;
}

typedef struct kase {
    asyncrt_tensormap_im2col_desc c; /* c.tiled is the tiled descriptor */
    bool im2col;
    const char *mutation;
} kase;

static void gen_valid(kase *k, asyncrt_deviceptr base)
{
    memset(k, 0, sizeof *k);
    asyncrt_tensormap_desc *d = &k->c.tiled;
    k->im2col = chance(15);
    /* The packed types and the 128B_ATOM swizzles are rarer: sm_90 takes neither. */
    d->dtype = (asyncrt_tensormap_dtype)(chance(10) ? T(16U4_ALIGN8B) + rnd(3) : rnd(T(16U4_ALIGN8B)));
    d->rank = k->im2col ? 3 + rnd(3) : 1 + rnd(5);
    bool a16 = is_align16b(d->dtype);
    /* 16U4_ALIGN16B takes interleave, but not the 32B swizzle that 32B interleave needs. */
    if (d->rank >= 3 && d->dtype != T(16U6_ALIGN16B) && chance(30))
        d->interleave = chance(50) || d->dtype == T(16U4_ALIGN16B) ? IL(16B) : IL(32B);
    if (d->interleave == IL(32B)) {
        d->swizzle = SW(32B);
    } else if (a16) {
        static const asyncrt_tensormap_swizzle ok6[] = {SW(NONE), SW(128B), SW(128B_ATOM_32B), SW(128B_ATOM_64B)};
        d->swizzle = ok6[rnd(d->dtype == T(16U6_ALIGN16B) ? 4 : 3)];
    } else {
        d->swizzle = (asyncrt_tensormap_swizzle)(chance(10) ? SW(128B_ATOM_32B) + rnd(3) : rnd(SW(128B_ATOM_32B)));
    }

    /* The inner row: box_dim[0] (tiled) or channels_per_pixel (im2col). */
    uint32_t inner;
    if (a16) {
        inner = 128;
    } else if (d->interleave != IL(NONE)) {
        inner = pick_box();
    } else {
        unsigned pc = per_chunk(d->dtype);
        unsigned max_chunks = 256 / pc;
        if (d->swizzle != SW(NONE) && span_of(d->swizzle) / 16 < max_chunks) max_chunks = span_of(d->swizzle) / 16;
        inner = pc * (chance(30) ? max_chunks : 1 + rnd(max_chunks));
    }
    for (uint32_t i = 0; i < d->rank; i++) {
        d->box_dim[i] = i == 0 ? inner : pick_box();
        d->element_stride[i] = chance(70) ? 1 : 1 + rnd(8);
    }
    if (k->im2col) {
        d->box_dim[0] = 0; /* unused: prove it */
        k->c.channels_per_pixel = inner;
        k->c.pixels_per_column = chance(20) ? 1024 : 1 + rnd(chance(50) ? 64 : 1024);
    }

    for (int attempt = 0;; attempt++) {
        for (uint32_t i = 0; i < d->rank; i++)
            d->global_dim[i] = attempt > 4 ? 1 + rnd(8) : pick_dim();
        if (a16) d->global_dim[0] = 128 * (1 + rnd(16));
        if (d->dtype == T(16U4_ALIGN8B)) d->global_dim[0] = 2 * (1 + rnd(2048));
        if (derive_strides(d)) break;
    }
    if (k->im2col) { /* corners inside the range with a non-empty box */
        int limit = d->rank == 3 ? 32768 : d->rank == 4 ? 128 : 16;
        for (uint32_t i = 0; i + 2 < d->rank; i++) {
            int lo = chance(50) ? 0 : -(int)rnd(limit + 1);
            int hi = chance(50) ? 0 : (int)rnd(limit);
            if ((long long)d->global_dim[i + 1] - lo + hi < 1) hi = 0, lo = 0;
            k->c.lower_corner[i] = lo;
            k->c.upper_corner[i] = hi;
        }
    }
    d->l2_promotion = (asyncrt_tensormap_l2_promotion)rnd(4);
    if (asyncrt__tensormap_dtype_is_float(d->dtype) && !is_packed(d->dtype) && chance(30))
        d->oob_fill = ASYNCRT_TENSORMAP_OOB_FILL_NAN;
    d->address = base + 256 * rnd(64);
    k->mutation = "none (valid)";
}

/* Applies mutation `m`; false when it does not apply to this case. */
static bool mutate(kase *k, unsigned m)
{
    asyncrt_tensormap_desc *d = &k->c.tiled;
    uint32_t r = d->rank;
    uint64_t a = stride_align(d);
    bool a16 = is_align16b(d->dtype), none = d->interleave == IL(NONE);
    /* Already broken by rank_* or dtype_enum_out: leave it so. */
    if (r < 1 || r > ASYNCRT_TENSORMAP_MAX_RANK || !asyncrt_tensormap_dtype_bits(d->dtype)) return false;
    switch (m) {
    case 0: k->mutation = "dtype_enum_out"; d->dtype = (asyncrt_tensormap_dtype)(16 + rnd(3)); return true;
    case 1: k->mutation = "rank_zero"; d->rank = 0; return true;
    case 2: k->mutation = "rank_six"; d->rank = 6; return true;
    case 3:
        if (k->im2col) return false;
        k->mutation = "rank_interleave_out";
        d->rank = 1 + rnd(2);
        d->interleave = IL(16B);
        return true;
    case 4: k->mutation = "interleave_enum_out"; d->interleave = (asyncrt_tensormap_interleave)3; return true;
    case 5: k->mutation = "swizzle_enum_out"; d->swizzle = (asyncrt_tensormap_swizzle)7; return true;
    case 6: k->mutation = "l2_enum_out"; d->l2_promotion = (asyncrt_tensormap_l2_promotion)4; return true;
    case 7: k->mutation = "oob_enum_out"; d->oob_fill = (asyncrt_tensormap_oob_fill)2; return true;
    case 8: {
        static const unsigned off[] = {1, 4, 8};
        k->mutation = "address_align16_out";
        d->address += off[rnd(3)];
        return true;
    }
    case 9:
        d->address += 16;
        k->mutation = a == 32 ? "address_align32_out" : "address_align16_in";
        return true;
    case 10: k->mutation = "address_null_probe"; d->address = 0; return true;
    case 11: k->mutation = "dim_zero"; d->global_dim[rnd(r)] = 0; return true;
    case 12:
        if (k->im2col) return false; /* the pixel-box area depends on dims */
        k->mutation = "dim_max_in";
        if (r == 1 && (a16 || d->dtype == T(16U4_ALIGN8B))) return false;
        d->global_dim[r - 1] = TWO_POW_32;
        return true;
    case 13: k->mutation = "dim_max_out"; d->global_dim[r - 1] = TWO_POW_32 + 1; return true;
    case 14:
        k->mutation = "dim_packed_out";
        if (a16 && d->global_dim[0] > 128) d->global_dim[0] -= 64;
        else if (d->dtype == T(16U4_ALIGN8B) && d->global_dim[0] > 2) d->global_dim[0] -= 1;
        else return false;
        return true;
    case 15:
        if (r < 2) return false;
        k->mutation = "stride_align16_out";
        d->global_stride[rnd(r - 1)] += 8;
        return true;
    case 16:
        if (r < 2 || a != 32) return false;
        k->mutation = "stride_align32_out";
        d->global_stride[r - 2] += 16;
        return true;
    case 17:
        if (r < 2) return false;
        k->mutation = "stride_max_in";
        d->global_stride[r - 2] = TWO_POW_40 - a;
        return true;
    case 18:
        if (r < 2) return false;
        k->mutation = "stride_max_out";
        d->global_stride[r - 2] = TWO_POW_40;
        return true;
    case 19: case 20: {
        if (r < 2) return false;
        uint64_t row = asyncrt__tensormap_bytes_of(d->dtype, d->global_dim[0]);
        uint64_t in = round_up(row, a);
        if (m == 19) {
            if (in < a * 2) return false;
            k->mutation = "stride0_consistency_out";
            d->global_stride[0] = (row - 1) / a * a;
        } else {
            k->mutation = "stride0_consistency_in";
            d->global_stride[0] = in;
        }
        return true;
    }
    case 21: case 22: {
        if (r < 3) return false;
        uint32_t j = 1 + rnd(r - 2);
        uint64_t in = round_up(d->global_stride[j - 1] * d->global_dim[j], a);
        if (m == 21) {
            if (in < a * 2) return false;
            k->mutation = "stride_i_consistency_out";
            d->global_stride[j] = (d->global_stride[j - 1] * d->global_dim[j] - 1) / a * a;
        } else {
            k->mutation = "stride_i_consistency_in";
            d->global_stride[j] = in;
        }
        return true;
    }
    case 23:
        if (r < 2) return false;
        k->mutation = "stride_zero";
        d->global_stride[rnd(r - 1)] = 0;
        return true;
    case 24: {
        if (r < 3 || d->global_stride[0] == d->global_stride[1]) return false;
        k->mutation = "stride_transposed";
        uint64_t t = d->global_stride[0];
        d->global_stride[0] = d->global_stride[1];
        d->global_stride[1] = t;
        return true;
    }
    case 25:
        if (k->im2col) return false;
        k->mutation = "box_zero";
        d->box_dim[rnd(r)] = 0;
        return true;
    case 26:
        if (k->im2col || r < 2) return false;
        k->mutation = "box_max_in";
        d->box_dim[1 + rnd(r - 1)] = 256;
        return true;
    case 27:
        if (k->im2col) return false;
        k->mutation = "box_max_out";
        d->box_dim[rnd(r)] = 257;
        return true;
    case 28: {
        if (!none || a16) return false;
        uint32_t *inner = k->im2col ? &k->c.channels_per_pixel : &d->box_dim[0];
        k->mutation = "box_inner16_out";
        *inner = *inner > 1 ? *inner - 1 : *inner + 1;
        return true;
    }
    case 29: {
        if (k->im2col || r < 2) return false;
        uint32_t i = 1 + rnd(r - 1);
        if (d->global_dim[i] >= 256) return false;
        k->mutation = "box_gt_dim_probe";
        d->box_dim[i] = (uint32_t)d->global_dim[i] + 1 + rnd(8);
        if (d->box_dim[i] > 256) d->box_dim[i] = 256;
        return true;
    }
    case 30: {
        if (!a16) return false;
        k->mutation = "box_packed_out";
        uint32_t v = chance(50) ? 64 : 256;
        if (k->im2col) k->c.channels_per_pixel = v;
        else d->box_dim[0] = v;
        return true;
    }
    case 31: case 32: case 33: {
        uint32_t i = none ? (r > 1 ? 1 + rnd(r - 1) : 0) : rnd(r);
        if (none && i == 0) return false;
        static const char *const names[] = {"es_zero", "es_max_in", "es_max_out"};
        static const uint32_t values[] = {0, 8, 9};
        k->mutation = names[m - 31];
        d->element_stride[i] = values[m - 31];
        return true;
    }
    case 34: {
        if (!none) return false;
        static const uint32_t values[] = {0, 9, 100};
        k->mutation = "es0_ignored_probe";
        d->element_stride[0] = values[rnd(3)];
        return true;
    }
    case 35:
        if (d->interleave != IL(32B)) return false;
        k->mutation = "il32_swizzle_out";
        d->swizzle = chance(50) ? SW(NONE) : (asyncrt_tensormap_swizzle)(2 + rnd(5));
        return true;
    case 36: case 37: {
        if (!none || a16 || d->swizzle == SW(NONE)) return false;
        unsigned chunks = span_of(d->swizzle) / 16 + (m == 36 ? 1 : 0);
        uint32_t v = per_chunk(d->dtype) * chunks;
        if (v > 256) return false;
        k->mutation = m == 36 ? "swizzle_span_out" : "swizzle_span_in";
        if (k->im2col) k->c.channels_per_pixel = v;
        else d->box_dim[0] = v;
        return true;
    }
    case 38:
        if (d->dtype != T(16U6_ALIGN16B) || r < 3) return false;
        k->mutation = "packed_interleave_out";
        d->interleave = IL(16B);
        return true;
    case 39: {
        if (!a16) return false;
        static const asyncrt_tensormap_swizzle bad[] = {SW(32B), SW(64B), SW(128B_ATOM_32B_FLIP_8B), SW(128B_ATOM_64B)};
        k->mutation = "packed_swizzle_out";
        d->swizzle = bad[rnd(d->dtype == T(16U4_ALIGN16B) ? 4 : 3)];
        return true;
    }
    case 40:
        if (asyncrt__tensormap_dtype_is_float(d->dtype) && !is_packed(d->dtype)) return false;
        k->mutation = "oob_nan_out";
        d->oob_fill = ASYNCRT_TENSORMAP_OOB_FILL_NAN;
        return true;
    case 41:
        if (!asyncrt__tensormap_dtype_is_float(d->dtype) || is_packed(d->dtype)) return false;
        k->mutation = "oob_nan_in";
        d->oob_fill = ASYNCRT_TENSORMAP_OOB_FILL_NAN;
        return true;
    /* im2col only */
    case 42: case 43: {
        if (!k->im2col) return false;
        int limit = r == 3 ? 32768 : r == 4 ? 128 : 16;
        uint32_t i = rnd(r - 2);
        bool lower = chance(50);
        if (m == 42) {
            k->mutation = "corner_range_out";
            if (lower) k->c.lower_corner[i] = chance(50) ? -limit - 1 : limit;
            else k->c.upper_corner[i] = chance(50) ? limit : -limit - 1;
        } else { /* the extremes that keep the box non-empty */
            k->mutation = "corner_range_in";
            k->c.lower_corner[i] = -limit;
            k->c.upper_corner[i] = limit - 1;
        }
        return true;
    }
    case 44: case 45: {
        if (!k->im2col) return false;
        int limit = r == 3 ? 32768 : r == 4 ? 128 : 16;
        uint32_t i = rnd(r - 2);
        if (d->global_dim[i + 1] > (uint64_t)limit) return false;
        k->mutation = m == 44 ? "corner_area_zero" : "corner_area_one";
        k->c.lower_corner[i] = 0;
        k->c.upper_corner[i] = -(int)d->global_dim[i + 1] + (m == 45 ? 1 : 0);
        return true;
    }
    case 46: case 47: {
        if (!k->im2col) return false;
        static const uint32_t ch[] = {0, 257};
        static const uint32_t px[] = {0, 1025};
        if (m == 46) {
            k->mutation = "channels_out";
            k->c.channels_per_pixel = ch[rnd(2)];
        } else {
            k->mutation = "pixels_out";
            k->c.pixels_per_column = px[rnd(2)];
        }
        return true;
    }
    default:
        return false;
    }
}
#define MUTATIONS 48

typedef struct tally {
    const char *name;
    unsigned cases, validate_rejects, driver_rejects, disagreements;
} tally;

static void count(tally *t, size_t cap, size_t *n, const char *name, bool vrej, bool drej)
{
    size_t i = 0;
    while (i < *n && strcmp(t[i].name, name) != 0) i++;
    if (i == *n) {
        if (*n == cap) return;
        t[(*n)++] = (tally){name, 0, 0, 0, 0};
    }
    t[i].cases++;
    t[i].validate_rejects += vrej;
    t[i].driver_rejects += drej;
    t[i].disagreements += vrej != drej;
}

static void print_tallies(const char *title, const tally *t, size_t n)
{
    printf("\n%-28s %7s %9s %9s %9s\n", title, "cases", "val_rej", "drv_rej", "disagree");
    for (size_t i = 0; i < n; i++)
        printf("%-28s %7u %9u %9u %9u%s\n", t[i].name, t[i].cases, t[i].validate_rejects,
               t[i].driver_rejects, t[i].disagreements, t[i].disagreements ? "  <--" : "");
}

static CUresult call_driver(const asyncrt_driver *drv, const kase *k, CUtensorMap *map)
{
    /* Arrays of 8 so that an out-of-range rank never reads past them. */
    const asyncrt_tensormap_desc *d = &k->c.tiled;
    cuuint64_t dim[8] = {0}, stride[8] = {0};
    cuuint32_t box[8] = {0}, es[8] = {0};
    int lo[8] = {0}, hi[8] = {0};
    memcpy(dim, d->global_dim, sizeof d->global_dim);
    memcpy(stride, d->global_stride, sizeof d->global_stride);
    memcpy(box, d->box_dim, sizeof d->box_dim);
    memcpy(es, d->element_stride, sizeof d->element_stride);
    memcpy(lo, k->c.lower_corner, sizeof k->c.lower_corner);
    memcpy(hi, k->c.upper_corner, sizeof k->c.upper_corner);
    void *address = (void *)(uintptr_t)d->address;
    if (k->im2col)
        return drv->cuTensorMapEncodeIm2col(map, (CUtensorMapDataType)d->dtype, d->rank, address, dim, stride,
                                            lo, hi, k->c.channels_per_pixel, k->c.pixels_per_column, es,
                                            (CUtensorMapInterleave)d->interleave,
                                            (CUtensorMapSwizzle)d->swizzle,
                                            (CUtensorMapL2promotion)d->l2_promotion,
                                            (CUtensorMapFloatOOBfill)d->oob_fill);
    return drv->cuTensorMapEncodeTiled(map, (CUtensorMapDataType)d->dtype, d->rank, address, dim, stride, box,
                                       es, (CUtensorMapInterleave)d->interleave,
                                       (CUtensorMapSwizzle)d->swizzle,
                                       (CUtensorMapL2promotion)d->l2_promotion,
                                       (CUtensorMapFloatOOBfill)d->oob_fill);
}

/* One line per case for offline analysis: index, kind, every parameter, verdicts. */
static void print_case_line(unsigned long c, const kase *k, bool vrej, bool drej)
{
    const asyncrt_tensormap_desc *d = &k->c.tiled;
    printf("CASE %lu %d %d %u %llu", c, k->im2col, (int)d->dtype, d->rank, (unsigned long long)d->address);
    for (int i = 0; i < 5; i++) printf(" %llu", (unsigned long long)d->global_dim[i]);
    for (int i = 0; i < 4; i++) printf(" %llu", (unsigned long long)d->global_stride[i]);
    for (int i = 0; i < 5; i++) printf(" %u", d->box_dim[i]);
    for (int i = 0; i < 5; i++) printf(" %u", d->element_stride[i]);
    printf(" %d %d %d %d", (int)d->interleave, (int)d->swizzle, (int)d->l2_promotion, (int)d->oob_fill);
    for (int i = 0; i < 3; i++) printf(" %d %d", k->c.lower_corner[i], k->c.upper_corner[i]);
    printf(" %u %u %d %d %s\n", k->c.channels_per_pixel, k->c.pixels_per_column, vrej, drej, k->mutation);
}


/* ---- --explore: fixed probes, one parameter swept across a boundary ----- */

/* A valid dense tiled case: dims and box innermost first, strides padded to 32 bytes. */
static kase probe_tiled(asyncrt_deviceptr base, asyncrt_tensormap_dtype t, uint32_t rank,
                        const uint64_t *dim, const uint32_t *box)
{
    kase k;
    memset(&k, 0, sizeof k);
    asyncrt_tensormap_desc *d = &k.c.tiled;
    d->dtype = t;
    d->rank = rank;
    d->address = base;
    uint64_t s = round_up(asyncrt__tensormap_bytes_of(t, dim[0]), 32);
    for (uint32_t i = 0; i < rank; i++) {
        d->global_dim[i] = dim[i];
        d->box_dim[i] = box[i];
        d->element_stride[i] = 1;
        if (i + 1 < rank) {
            d->global_stride[i] = s;
            s = round_up(s * dim[i + 1], 32);
        }
    }
    k.mutation = "probe";
    return k;
}

static kase probe_im2col(asyncrt_deviceptr base, asyncrt_tensormap_dtype t, uint32_t rank,
                         const uint64_t *dim, uint32_t channels, uint32_t pixels)
{
    static const uint32_t unused[5] = {0};
    kase k = probe_tiled(base, t, rank, dim, unused);
    k.im2col = true;
    k.c.channels_per_pixel = channels;
    k.c.pixels_per_column = pixels;
    return k;
}

static unsigned g_probe_mismatch;

static void probe(const asyncrt_driver *drv, const char *name, const kase *k)
{
    const char *rule = NULL;
    char msg[512];
    CUtensorMap map;
    asyncrt_status s = asyncrt__tensormap_predict_driver(&k->c.tiled, k->im2col ? &k->c : NULL, 90, &rule, msg, sizeof msg);
    CUresult r = drv ? call_driver(drv, k, &map) : (s ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS);
    bool mismatch = (s != ASYNCRT_SUCCESS) != (r != CUDA_SUCCESS);
    g_probe_mismatch += mismatch;
    printf("EXPLORE %-44s driver %-7s validate %s%s\n", name, r == CUDA_SUCCESS ? "OK" : r == CUDA_ERROR_INVALID_VALUE ? "INVALID" : "ERROR",
           s == ASYNCRT_SUCCESS ? "OK" : rule, mismatch ? "   <-- MISMATCH" : "");
}

#define U64(...) ((const uint64_t[]){__VA_ARGS__})
#define U32(...) ((const uint32_t[]){__VA_ARGS__})

static void explore(const asyncrt_driver *drv, asyncrt_deviceptr base)
{
    kase k;
    char name[96];
    const uint64_t *big3 = U64(4096, 4096, 4096), *big4 = U64(4096, 4096, 4096, 64);
    /* Shared-memory size of the box: 233472 (228 KB) passes, 233520 fails? */
    static const uint32_t tot[][3] = {{16, 73, 199}, {16, 64, 227}, {48, 35, 139}, {64, 16, 228}, {4, 64, 228}};
    for (int il = 0; il < 2; il++)
        for (unsigned i = 0; i < 5; i++) {
            asyncrt_tensormap_dtype t = i == 4 ? T(F32) : T(U8);
            k = probe_tiled(base, t, 3, big3, tot[i]);
            k.c.tiled.interleave = il ? IL(16B) : IL(NONE);
            snprintf(name, sizeof name, "smem %s box{%u,%u,%u} il%d =%llu", i == 4 ? "f32" : "u8", tot[i][0], tot[i][1],
                     tot[i][2], il, (unsigned long long)asyncrt__tensormap_bytes_of(t, tot[i][0]) * tot[i][1] * tot[i][2]);
            probe(drv, name, &k);
        }
    /* Element strides: floor(box / es) per dimension, es[0] included, 0 when box < es? */
    static const struct { uint32_t box[4], es[4]; } esv[] = {
        {{64, 256, 4, 1}, {1, 1, 1, 1}}, {{64, 256, 4, 1}, {2, 1, 1, 1}}, {{64, 256, 4, 1}, {1, 1, 2, 1}},
        {{256, 227, 9, 1}, {1, 1, 2, 1}}, {{256, 227, 11, 1}, {1, 1, 2, 1}}, {{32, 64, 227, 1}, {2, 1, 1, 1}},
        {{32, 64, 228, 1}, {2, 1, 1, 1}}, {{48, 64, 227, 1}, {3, 1, 1, 1}}, {{64, 256, 256, 2}, {1, 1, 1, 3}},
        {{64, 256, 256, 2}, {1, 1, 1, 2}}, {{64, 256, 256, 7}, {1, 1, 1, 8}}, {{16, 256, 256, 2}, {32, 1, 1, 1}}};
    for (unsigned i = 0; i < sizeof esv / sizeof *esv; i++) {
        k = probe_tiled(base, T(U8), 4, big4, esv[i].box);
        memcpy(k.c.tiled.element_stride, esv[i].es, sizeof esv[i].es);
        snprintf(name, sizeof name, "es u8 box{%u,%u,%u,%u} es{%u,%u,%u,%u}", esv[i].box[0], esv[i].box[1], esv[i].box[2],
                 esv[i].box[3], esv[i].es[0], esv[i].es[1], esv[i].es[2], esv[i].es[3]);
        probe(drv, name, &k);
    }
    static const uint32_t es0[] = {0, 1, 8, 9};
    for (unsigned i = 0; i < 4; i++) {
        k = probe_tiled(base, T(F32), 2, U64(64, 64), U32(16, 16));
        k.c.tiled.element_stride[0] = es0[i];
        snprintf(name, sizeof name, "es0=%u interleave none", es0[i]);
        probe(drv, name, &k);
    }
    /* Interleave: inner box bytes multiple of 16? swizzles with 32B interleave, span with 16B. */
    static const uint32_t inner[] = {4, 8, 12, 16, 24, 32, 128, 256};
    for (int il = 1; il <= 2; il++)
        for (unsigned i = 0; i < 8; i++) {
            k = probe_tiled(base, T(F16), 3, U64(512, 64, 64), U32(inner[i], 8, 8));
            k.c.tiled.interleave = (asyncrt_tensormap_interleave)il;
            k.c.tiled.swizzle = il == 2 ? SW(32B) : SW(NONE);
            snprintf(name, sizeof name, "il%d f16 box0=%u (%u bytes)", il == 1 ? 16 : 32, inner[i], inner[i] * 2);
            probe(drv, name, &k);
        }
    for (int imc = 0; imc < 2; imc++)
        for (int sw = 0; sw < 4; sw++)
            for (int il = 1; il <= 2; il++) {
                static const uint32_t b0[] = {16, 64};
                for (int w = 0; w < 2; w++) {
                    k = imc ? probe_im2col(base, T(F16), 3, U64(512, 64, 64), b0[w], 16)
                            : probe_tiled(base, T(F16), 3, U64(512, 64, 64), U32(b0[w], 8, 8));
                    k.c.tiled.interleave = (asyncrt_tensormap_interleave)il;
                    k.c.tiled.swizzle = (asyncrt_tensormap_swizzle)sw;
                    snprintf(name, sizeof name, "%s il%d swizzle %s inner %u bytes", imc ? "im2col" : "tiled", il == 1 ? 16 : 32,
                             asyncrt_tensormap_swizzle_name((asyncrt_tensormap_swizzle)sw), b0[w] * 2);
                    probe(drv, name, &k);
                }
            }
    /* im2col: shared-memory size channels x pixels, element strides. */
    static const uint32_t px[] = {227, 228};
    for (int e = 0; e < 3; e++)
        for (int i = 0; i < 2; i++) {
            k = probe_im2col(base, T(F32), 3, U64(512, 64, 64), 256, px[i]);
            if (e == 1) k.c.tiled.element_stride[0] = 2;
            if (e == 2) k.c.tiled.element_stride[1] = 2;
            snprintf(name, sizeof name, "im2col f32 ch256 px%u es%s", px[i], e == 0 ? "{1,1,1}" : e == 1 ? "{2,1,1}" : "{1,2,1}");
            probe(drv, name, &k);
        }
    /* im2col pixel-box area (dim - lower + upper) per interleave, rank 3 and 4. */
    for (int il = 0; il <= 2; il++)
        for (int area = -1; area <= 2; area++)
            for (int rank = 3; rank <= 4; rank++) {
                k = probe_im2col(base, T(F16), (uint32_t)rank, U64(64, 4, 20, 20), 16, 16);
                k.c.tiled.interleave = (asyncrt_tensormap_interleave)il;
                k.c.tiled.swizzle = il == 2 ? SW(32B) : SW(NONE);
                k.c.upper_corner[0] = area - 4;
                snprintf(name, sizeof name, "im2col rank%d il%d area %d", rank, il, area);
                probe(drv, name, &k);
            }
    /* With interleave, corner i checked against global_dim[i] (here 64) instead of [i + 1]? */
    static const int upper[] = {-62, -63, -64, -65};
    for (int il = 0; il <= 2; il++)
        for (int u = 0; u < 4; u++) {
            k = probe_im2col(base, T(F16), 4, U64(64, 100, 20, 20), 16, 16);
            k.c.tiled.interleave = (asyncrt_tensormap_interleave)il;
            k.c.upper_corner[0] = upper[u];
            snprintf(name, sizeof name, "im2col rank4 il%d dims{64,100,..} upper %d", il, upper[u]);
            probe(drv, name, &k);
        }
    /* The im2col rejections that led to that (f16 rank 3, interleave, global_dim[0] = 1). */
    for (int v = 0; v < 12; v++) {
        k = probe_im2col(base, T(F16), 3, U64(1, 4, 3842), 256, 45);
        asyncrt_tensormap_desc *d = &k.c.tiled;
        d->global_stride[0] = 96;
        d->global_stride[1] = 384;
        d->element_stride[2] = 2;
        d->interleave = IL(32B);
        d->swizzle = SW(32B);
        k.c.upper_corner[0] = -3;
        static const char *const what[] = {"as seen", "ch128", "ch64", "ch16", "px1", "area2", "es1", "il0", "dim0=256",
                                          "il16", "area2 ch16", "rank4"};
        switch (v) {
        case 1: k.c.channels_per_pixel = 128; break;
        case 2: k.c.channels_per_pixel = 64; break;
        case 3: k.c.channels_per_pixel = 16; break;
        case 4: k.c.pixels_per_column = 1; break;
        case 5: k.c.upper_corner[0] = -2; break;
        case 6: d->element_stride[2] = 1; break;
        case 7: d->interleave = IL(NONE); d->swizzle = SW(NONE); break;
        case 8: d->global_dim[0] = 256; d->global_stride[0] = 512 * 4; d->global_stride[1] = 512 * 4 * 4; break;
        case 9: d->interleave = IL(16B); break;
        case 10: k.c.upper_corner[0] = -2; k.c.channels_per_pixel = 16; break;
        case 11: d->rank = 4; d->global_dim[3] = 2; d->global_stride[2] = 384 * 3842; d->element_stride[3] = 1; break;
        }
        snprintf(name, sizeof name, "im2col odd case: %s", what[v]);
        probe(drv, name, &k);
    }
    /* Limits of dims, NULL address, box larger than dims. */
    k = probe_tiled(base, T(U8), 1, U64(TWO_POW_32), U32(16));
    probe(drv, "rank1 u8 dim0 = 2^32", &k);
    k = probe_tiled(base, T(U8), 1, U64(TWO_POW_32 + 1), U32(16));
    probe(drv, "rank1 u8 dim0 = 2^32+1", &k);
    k = probe_tiled(0, T(F32), 2, U64(64, 64), U32(16, 16));
    probe(drv, "tiled NULL address", &k);
    k = probe_tiled(base, T(F32), 2, U64(3, 5), U32(256, 256 / 4));
    probe(drv, "tiled box > dims", &k);
    k = probe_tiled(base, T(F32), 3, U64(64, 64, 64), U32(16, 16, 16));
    k.c.tiled.global_stride[1] = 16;
    probe(drv, "tiled strides inconsistent", &k);
    printf("EXPLORE done: %u mismatches\n", g_probe_mismatch);
}

int main(int argc, char **argv)
{
    unsigned long cases = 20000;
    unsigned long long seed = 1;
    bool quiet = false, dry_run = false, list = false, explore_only = false;
    int sm = 90;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--cases") == 0 && i + 1 < argc) cases = strtoul(argv[++i], NULL, 0);
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) seed = strtoull(argv[++i], NULL, 0);
        else if (strcmp(argv[i], "--quiet") == 0) quiet = true;
        else if (strcmp(argv[i], "--dry-run") == 0) dry_run = true;
        else if (strcmp(argv[i], "--list") == 0) list = true;
        else if (strcmp(argv[i], "--explore") == 0) explore_only = true;
        else if (strcmp(argv[i], "--sm") == 0 && i + 1 < argc) sm = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--cases N] [--seed S] [--quiet] [--dry-run [--sm SM]] [--list] [--explore]\n",
                    argv[0]);
            return 2;
        }
    }
    asyncrt_context *ctx = NULL;
    asyncrt_deviceptr base = 0x7f0000000000ull;
    if (!dry_run) {
        ctx = test_open_device_or_skip("tensormap_differential");
        if (!ctx) return ASYNCRT_TEST_SKIP;
        const asyncrt_device_info *info = asyncrt_context_device(ctx);
        sm = info->cc_major * 10 + info->cc_minor;
        if (sm < 90) {
            printf("tensormap_differential: skipped, %s (sm_%d) has no TMA\n", info->name, sm);
            asyncrt_context_destroy(ctx);
            return ASYNCRT_TEST_SKIP;
        }
        if (asyncrt_memory_alloc(ctx, 1 << 20, &base) != ASYNCRT_SUCCESS) {
            fprintf(stderr, "tensormap_differential: %s\n", asyncrt_context_last_error(ctx));
            return 1;
        }
        printf("tensormap_differential: %s (sm_%d), driver %d\n", info->name, sm, ctx->drv->version);
    } else {
        printf("tensormap_differential: DRY RUN (no driver: its verdict is validate's), sm_%d\n", sm);
    }
    if (explore_only) {
        explore(ctx ? ctx->drv : NULL, base);
        if (ctx) {
            asyncrt_memory_free(ctx, base);
            asyncrt_context_destroy(ctx);
        }
        return g_probe_mismatch ? 1 : 0;
    }
    g_rng = seed ? seed : 1;
    printf("tensormap_differential: %lu cases, seed %llu\n", cases, seed);

    static tally by_mutation[64], by_rule[64], by_kind[4], by_warning[16];
    static asyncrt_tensormap_report report = ASYNCRT_TENSORMAP_REPORT_INIT;
    size_t n_mut = 0, n_rule = 0, n_kind = 0, n_warn = 0;
    unsigned long agree = 0, disagree = 0, other_errors = 0;
    static char dump[4096], msg[512];
    CUtensorMap map;
    for (unsigned long c = 0; c < cases; c++) {
        kase k;
        gen_valid(&k, base);
        if (!chance(25)) { /* 75% get one mutation (some keep the case valid) */
            kase before = k;
            for (int tries = 0; tries < 20; tries++) {
                if (mutate(&k, rnd(MUTATIONS))) break;
                k = before; /* a mutation that does not apply may have touched k */
            }
            if (chance(5)) { /* and a few a second one, named after the first */
                before = k;
                if (mutate(&k, rnd(MUTATIONS))) k.mutation = before.mutation;
                else k = before;
            }
        }
        const char *rule = NULL;
        asyncrt_status s = asyncrt__tensormap_predict_driver(&k.c.tiled, k.im2col ? &k.c : NULL, sm, &rule, msg, sizeof msg);
        CUresult r = dry_run ? (s != ASYNCRT_SUCCESS ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS)
                             : call_driver(ctx->drv, &k, &map);
        bool vrej = s != ASYNCRT_SUCCESS, drej = r != CUDA_SUCCESS;
        if (list) print_case_line(c, &k, vrej, drej);
        if (drej && r != CUDA_ERROR_INVALID_VALUE) other_errors++;
        count(by_mutation, 64, &n_mut, k.mutation, vrej, drej);
        count(by_rule, 64, &n_rule, rule ? rule : "(validate accepts)", vrej, drej);
        count(by_kind, 4, &n_kind, k.im2col ? "im2col" : "tiled", vrej, drej);
        if (!vrej) { /* warnings are looked for only without errors; they predict nothing */
            memset(&report, 0, sizeof report);
            asyncrt__tensormap_collect_warnings(&k.c.tiled, k.im2col ? &k.c : NULL, 0, &report);
            for (unsigned w = 0; w < report.warning_count && w < ASYNCRT_TENSORMAP_MAX_WARNINGS; w++)
                count(by_warning, 16, &n_warn, report.warnings[w].rule, false, drej);
        }
        if (vrej == drej) {
            agree++;
            continue;
        }
        disagree++;
        if (quiet) continue;
        char code[128];
        asyncrt__driver_describe(ctx ? ctx->drv : NULL, r, code, sizeof code);
        if (k.im2col) asyncrt_tensormap_dump_im2col(&k.c, dump, sizeof dump);
        else asyncrt_tensormap_dump(&k.c.tiled, dump, sizeof dump);
        printf("\nDISAGREEMENT %lu (case %lu, %s, mutation %s): validate %s, driver %s\n", disagree, c,
               k.im2col ? "im2col" : "tiled", k.mutation, vrej ? "REJECTS" : "ACCEPTS", code);
        if (vrej) printf("  rule %s: %s\n", rule, msg);
        for (char *line = strtok(dump, "\n"); line; line = strtok(NULL, "\n")) printf("  %s\n", line);
    }
    print_tallies("by kind", by_kind, n_kind);
    print_tallies("by mutation", by_mutation, n_mut);
    print_tallies("by first rule validate broke", by_rule, n_rule);
    print_tallies("warnings (validate accepts)", by_warning, n_warn);
    printf("\ndriver errors other than CUDA_ERROR_INVALID_VALUE: %lu\n", other_errors);
    printf("cases: %lu\nagreements: %lu\ndisagreements: %lu\n", cases, agree, disagree);
    if (ctx) {
        asyncrt_memory_free(ctx, base);
        asyncrt_context_destroy(ctx);
    }
    return disagree ? 1 : 0;
}
