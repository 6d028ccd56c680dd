/* CPU: every rule of asyncrt_tensormap_validate with a case just inside and
 * one just outside its limit, the messages (the offending value must appear),
 * the helpers, and an sm_90 compile of the GPU test's TMA kernel. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>

#include "test_support.h"
#include "tensormap_rules.h"
#include "tma_swizzle_kernel.h"
#include "tma_tile_kernel.h"

#define T(name) ASYNCRT_TENSORMAP_DTYPE_##name
#define SW(name) ASYNCRT_TENSORMAP_SWIZZLE_##name
#define IL(name) ASYNCRT_TENSORMAP_INTERLEAVE_##name
#define TWO_POW_32 (UINT64_C(1) << 32)
#define TWO_POW_40 (UINT64_C(1) << 40)

/* A valid f32 rank-`rank` tensor: 64 x 8 x 4 x 2 x 2, dense, box 32 x 8 x 1... */
static asyncrt_tensormap_desc base(uint32_t rank)
{
    static const uint64_t dims[5] = {64, 8, 4, 2, 2};
    asyncrt_tensormap_desc d;
    memset(&d, 0, sizeof d);
    d.dtype = T(F32);
    d.rank = rank;
    d.address = 0x100000;
    uint64_t stride = 64 * 4;
    for (uint32_t i = 0; i < rank; i++) {
        d.global_dim[i] = dims[i];
        d.box_dim[i] = i == 0 ? 32 : 2;
        d.element_stride[i] = 1;
        if (i + 1 < rank) {
            d.global_stride[i] = stride;
            stride *= dims[i + 1];
        }
    }
    return d;
}

/* A valid packed tensor: 256 x 4 values of `dtype`, box 128 (or 32) x 2. */
static asyncrt_tensormap_desc packed(asyncrt_tensormap_dtype dtype)
{
    asyncrt_tensormap_desc d = base(2);
    d.dtype = dtype;
    d.global_dim[0] = 256;
    d.global_stride[0] = 256; /* >= 256 values x 6 bits, a multiple of 32 */
    d.box_dim[0] = dtype == T(16U4_ALIGN8B) ? 32 : 128;
    return d;
}

static void expect_ok_sm(const asyncrt_tensormap_desc *d, int sm, int line)
{
    char msg[512];
    const char *rule;
    asyncrt_status s = asyncrt__tensormap_check(d, NULL, sm, &rule, msg, sizeof msg);
    if (s != ASYNCRT_SUCCESS) fail_msg("line %d: expected valid, got rule %s: %s", line, rule, msg);
    assert_int_equal(asyncrt_tensormap_validate_for_sm(d, sm, msg, sizeof msg), ASYNCRT_SUCCESS);
    assert_string_equal(msg, "");
}

/* Expects `rule` to fire with a message containing every needle. */
static void expect_rule_sm(const asyncrt_tensormap_desc *d, int sm, const char *rule,
                           const char *needle1, const char *needle2, int line)
{
    char msg[512];
    const char *got = NULL;
    asyncrt_status s = asyncrt__tensormap_check(d, NULL, sm, &got, msg, sizeof msg);
    if (s != ASYNCRT_ERROR_TENSORMAP_INVALID || !got || strcmp(got, rule) != 0)
        fail_msg("line %d: expected rule %s, got %s (%s): %s", line, rule, got ? got : "none",
                 asyncrt_status_string(s), msg);
    if (!strstr(msg, needle1) || (needle2 && !strstr(msg, needle2)))
        fail_msg("line %d: message \"%s\" lacks \"%s\"%s%s", line, msg, needle1, needle2 ? " or " : "",
                 needle2 ? needle2 : "");
    char msg2[512];
    assert_int_equal(asyncrt_tensormap_validate_for_sm(d, sm, msg2, sizeof msg2),
                     ASYNCRT_ERROR_TENSORMAP_INVALID);
    assert_string_equal(msg, msg2);
}

#define OK(d) expect_ok_sm(&(d), 0, __LINE__)
#define BAD(d, rule, n1, n2) expect_rule_sm(&(d), 0, rule, n1, n2, __LINE__)

static void test_base_is_valid_for_every_rank(void **state)
{
    (void)state;
    for (uint32_t r = 1; r <= 5; r++) {
        asyncrt_tensormap_desc d = base(r);
        OK(d);
    }
}

static void test_enums(void **state)
{
    (void)state;
    asyncrt_tensormap_desc d = packed(T(16U6_ALIGN16B)); /* the last dtype, just inside */
    d.address = 0x100020;
    OK(d);
    d.dtype = ASYNCRT_TENSORMAP_DTYPE_COUNT;
    BAD(d, "dtype", "dtype (16)", "0..15");

    d = base(3);
    d.interleave = IL(32B);
    d.swizzle = SW(32B);
    d.box_dim[0] = 8;
    OK(d);
    d.interleave = (asyncrt_tensormap_interleave)3;
    BAD(d, "interleave", "interleave (3)", NULL);

    d = base(2);
    d.swizzle = SW(128B_ATOM_64B); /* 32 floats = 128 bytes */
    OK(d);
    d.swizzle = (asyncrt_tensormap_swizzle)7;
    BAD(d, "swizzle", "swizzle (7)", NULL);

    d = base(2);
    d.l2_promotion = ASYNCRT_TENSORMAP_L2_PROMOTION_256B;
    OK(d);
    d.l2_promotion = (asyncrt_tensormap_l2_promotion)4;
    BAD(d, "l2_promotion", "l2_promotion (4)", NULL);

    d = base(2);
    d.oob_fill = ASYNCRT_TENSORMAP_OOB_FILL_NAN;
    OK(d);
    d.oob_fill = (asyncrt_tensormap_oob_fill)2;
    BAD(d, "oob_fill", "oob_fill (2)", NULL);
}

static void test_rank(void **state)
{
    (void)state;
    asyncrt_tensormap_desc d = base(1);
    OK(d);
    d.rank = 0;
    BAD(d, "rank", "rank (0)", "1..5");
    d = base(5);
    OK(d);
    d.rank = 6;
    BAD(d, "rank", "rank (6)", "1..5");

    d = base(3);
    d.interleave = IL(16B);
    OK(d);
    d = base(2);
    d.interleave = IL(16B);
    BAD(d, "rank_interleave", "rank (2)", "at least 3 when interleave is 16B");
}

static void test_address(void **state)
{
    (void)state;
    asyncrt_tensormap_desc d = base(2);
    d.address = 0x100010;
    OK(d);
    d.address = 0x100008;
    BAD(d, "address_align16", "address (0x100008)", "16-byte");

    d = base(3);
    d.interleave = IL(32B);
    d.swizzle = SW(32B);
    d.box_dim[0] = 8;
    d.address = 0x100020;
    OK(d);
    d.address = 0x100010;
    BAD(d, "address_align32", "address (0x100010)", "32-byte aligned when interleave is 32B");

    d = packed(T(16U4_ALIGN16B));
    d.address = 0x100020;
    OK(d);
    d.address = 0x100010;
    BAD(d, "address_align32", "address (0x100010)", "when dtype is 16u4_align16b");
}

static void test_global_dim(void **state)
{
    (void)state;
    asyncrt_tensormap_desc d = base(2);
    d.global_dim[1] = 1;
    OK(d);
    d.global_dim[1] = 0;
    BAD(d, "global_dim_range", "global_dim[1] (0)", "1..2^32");
    d = base(2);
    d.global_dim[1] = TWO_POW_32; /* the outermost: no stride depends on it */
    OK(d);
    d.global_dim[1] = TWO_POW_32 + 1;
    BAD(d, "global_dim_range", "global_dim[1] (4294967297)", "1..2^32");

    d = packed(T(16U6_ALIGN16B));
    d.global_dim[0] = 128;
    OK(d);
    d.global_dim[0] = 192;
    BAD(d, "global_dim_packed", "global_dim[0] (192)", "multiple of 128 when dtype is 16u6_align16b");
    d = packed(T(16U4_ALIGN8B));
    d.global_dim[0] = 66;
    OK(d);
    d.global_dim[0] = 65;
    BAD(d, "global_dim_packed", "global_dim[0] (65)", "multiple of 2");
}

static void test_global_stride(void **state)
{
    (void)state;
    asyncrt_tensormap_desc d = base(2);
    d.global_stride[0] = 256 + 16;
    OK(d);
    d.global_stride[0] = 256 + 8;
    BAD(d, "stride_align", "global_stride[0] (264)", "multiple of 16");

    d = base(3);
    d.interleave = IL(32B);
    d.swizzle = SW(32B);
    d.box_dim[0] = 8;
    d.global_stride[1] = 2048 + 32;
    OK(d);
    d.global_stride[1] = 2048 + 16;
    BAD(d, "stride_align", "global_stride[1] (2064)", "multiple of 32 bytes when interleave is 32B");
    d = packed(T(16U6_ALIGN16B));
    d.global_stride[0] = 256 + 16;
    BAD(d, "stride_align", "global_stride[0] (272)", "when dtype is 16u6_align16b");

    d = base(2);
    d.global_stride[0] = TWO_POW_40 - 16;
    OK(d);
    d.global_stride[0] = TWO_POW_40;
    BAD(d, "stride_max", "global_stride[0] (1099511627776)", "less than 2^40");
}

/* cuda.h's pseudo-code has each stride cover the previous dimension; the
 * driver accepts strides that do not (observed on driver 580), so must we. */
static void test_strides_need_not_cover_the_previous_dimension(void **state)
{
    (void)state;
    asyncrt_tensormap_desc d = base(3); /* 64 floats = 256 bytes per row, 8 rows */
    d.global_stride[0] = 16;            /* less than a row */
    OK(d);
    d = base(3);
    d.global_stride[1] = d.global_stride[0]; /* planes alias rows */
    OK(d);
    d.global_stride[0] = 0;
    d.global_stride[1] = 0;
    OK(d);
}

static void test_box_dim(void **state)
{
    (void)state;
    asyncrt_tensormap_desc d = base(2);
    d.box_dim[1] = 1;
    OK(d);
    d.box_dim[1] = 0;
    BAD(d, "box_dim_range", "box_dim[1] (0)", "1..256");
    d.box_dim[1] = 256;
    OK(d);
    d.box_dim[1] = 257;
    BAD(d, "box_dim_range", "box_dim[1] (257)", "1..256");

    d = base(2);
    d.box_dim[0] = 12; /* 48 bytes */
    OK(d);
    d.box_dim[0] = 10;
    BAD(d, "box_inner_multiple16", "box_dim[0] (10) x 4 bytes = 40 bytes: must be a multiple of 16 "
        "when interleave is NONE", NULL);
    for (int il = 1; il <= 2; il++) { /* the driver demands it with interleave too */
        d = base(3);
        d.interleave = (asyncrt_tensormap_interleave)il;
        d.swizzle = SW(32B);
        d.address = 0x100020;
        d.box_dim[0] = 12; /* 48 bytes */
        OK(d);
        d.box_dim[0] = 10;
        BAD(d, "box_inner_multiple16", "box_dim[0] (10) x 4 bytes = 40 bytes: must be a multiple of 16",
            "with interleave too: enforced by the driver");
    }
    d = packed(T(16U4_ALIGN8B));
    d.box_dim[0] = 32; /* 16 bytes */
    OK(d);
    d.box_dim[0] = 16;
    BAD(d, "box_inner_multiple16", "box_dim[0] (16) x 4 bits = 8 bytes", NULL);

    d = packed(T(16U4_ALIGN16B));
    d.address = 0x100020;
    d.box_dim[0] = 128;
    OK(d);
    d.box_dim[0] = 64;
    BAD(d, "box_inner_packed128", "box_dim[0] (64)", "must be 128 when dtype is 16u4_align16b");
}

static void test_element_stride(void **state)
{
    (void)state;
    asyncrt_tensormap_desc d = base(2);
    d.element_stride[1] = 8;
    OK(d);
    d.element_stride[1] = 9;
    BAD(d, "element_stride_range", "element_stride[1] (9)", "1..8");
    d.element_stride[1] = 0;
    BAD(d, "element_stride_range", "element_stride[1] (0)", "1..8");
    /* TMA ignores element_stride[0] without interleave, but the driver range-checks it. */
    d = base(2);
    d.element_stride[0] = 8;
    OK(d);
    d.element_stride[0] = 9;
    BAD(d, "element_stride_range", "element_stride[0] (9)", "also when interleave is NONE");
    d.element_stride[0] = 0;
    BAD(d, "element_stride_range", "element_stride[0] (0)", "enforced by the driver");
    d = base(3);
    d.interleave = IL(16B);
    d.element_stride[0] = 8;
    OK(d);
    d.element_stride[0] = 0;
    BAD(d, "element_stride_range", "element_stride[0] (0)", NULL);
}

static void test_swizzle(void **state)
{
    (void)state;
    static const struct { asyncrt_tensormap_swizzle s; uint32_t fits; const char *span; } cases[] = {
        {SW(32B), 8, "at most 32 bytes"},
        {SW(64B), 16, "at most 64 bytes"},
        {SW(128B), 32, "at most 128 bytes"},
        {SW(128B_ATOM_32B), 32, "at most 128 bytes"},
        {SW(128B_ATOM_32B_FLIP_8B), 32, "at most 128 bytes"},
        {SW(128B_ATOM_64B), 32, "at most 128 bytes"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        asyncrt_tensormap_desc d = base(2);
        d.swizzle = cases[i].s;
        d.box_dim[0] = cases[i].fits;
        OK(d);
        d.box_dim[0] = cases[i].fits + 4; /* one more 16-byte chunk */
        char needle[64];
        snprintf(needle, sizeof needle, "box_dim[0] (%u)", cases[i].fits + 4);
        BAD(d, "swizzle_span", needle, cases[i].span);
    }
    asyncrt_tensormap_desc d = base(3);
    d.interleave = IL(32B);
    d.box_dim[0] = 8;
    /* cuda.h: interleave 32B needs SWIZZLE_32B; the driver accepts any of
     * these (asyncrt's verdict: test_il32_swizzle). */
    static const asyncrt_tensormap_swizzle with32[] = {SW(NONE), SW(32B), SW(64B), SW(128B)};
    for (size_t i = 0; i < 4; i++) {
        d.swizzle = with32[i];
        assert_int_equal(asyncrt__tensormap_predict_driver(&d, NULL, 90, NULL, NULL, 0), ASYNCRT_SUCCESS);
    }
    d.swizzle = SW(32B);
    OK(d);
    d = base(3);
    d.interleave = IL(16B);
    d.box_dim[0] = 64; /* no span rule with interleave */
    d.swizzle = SW(32B);
    OK(d);
}

/* The box must fit in 233472 bytes of shared memory (driver, not documented),
 * counting box_dim[i] / element_stride[i] rounded down, element_stride[0]
 * included. */
/* u8, box 64 x 16 x planes: planes KiB of shared memory. */
static asyncrt_tensormap_desc smem_box(uint32_t planes)
{
    asyncrt_tensormap_desc d = base(3);
    d.dtype = T(U8);
    d.global_dim[0] = 4096;
    d.box_dim[0] = 64;
    d.box_dim[1] = 16;
    d.box_dim[2] = planes;
    return d;
}

static void test_box_smem(void **state)
{
    (void)state;
    asyncrt_tensormap_desc d = smem_box(228); /* 233472 bytes */
    OK(d);
    d.box_dim[0] = 80; /* 291840 */
    BAD(d, "box_smem", "291840 bytes", "233472 bytes of shared memory");
    d.element_stride[0] = 2; /* 40 x 16 x 228 = 145920 */
    OK(d);
    d.element_stride[0] = 1;
    d.box_dim[2] = 229;
    d.element_stride[2] = 2; /* 80 x 16 x 114 = 145920 */
    OK(d);
    d.box_dim[0] = 64;
    d.box_dim[2] = 256;
    d.element_stride[2] = 1; /* 64 x 16 x 256 = 262144 */
    BAD(d, "box_smem", "64/1 x 16/1 x 256/1", "262144 bytes");
    d.box_dim[1] = 7;
    d.element_stride[1] = 8; /* 7 / 8 rounds down to 0: the driver lets it pass */
    OK(d);
}

static void test_packed_types(void **state)
{
    (void)state;
    asyncrt_tensormap_desc d = packed(T(16U6_ALIGN16B));
    d.address = 0x100020;
    d.swizzle = SW(128B_ATOM_64B);
    OK(d);
    d.swizzle = SW(64B);
    BAD(d, "packed_swizzle", "swizzle (64b)", "16u6_align16b supports only");
    d.swizzle = SW(128B_ATOM_32B_FLIP_8B);
    BAD(d, "packed_swizzle", "swizzle (128b_atom_32b_flip_8b)", NULL);

    d = packed(T(16U4_ALIGN16B));
    d.address = 0x100020;
    d.swizzle = SW(128B_ATOM_32B);
    OK(d);
    d.swizzle = SW(128B_ATOM_64B);
    BAD(d, "packed_swizzle", "swizzle (128b_atom_64b)", "16u4_align16b supports only");

    d = packed(T(16U6_ALIGN16B));
    d.address = 0x100020;
    d.rank = 3;
    d.global_dim[2] = 2;
    d.global_stride[1] = 2048; /* 256 x 8 rows */
    d.box_dim[2] = 1;
    d.element_stride[2] = 1;
    OK(d);
    d.interleave = IL(16B);
    BAD(d, "packed_interleave", "interleave (16b)", "must be none when dtype is 16u6_align16b");
}

static void test_oob_fill(void **state)
{
    (void)state;
    asyncrt_tensormap_desc d = base(2);
    d.oob_fill = ASYNCRT_TENSORMAP_OOB_FILL_NAN;
    d.dtype = T(TF32_FTZ);
    OK(d);
    d.dtype = T(I32);
    BAD(d, "oob_nan_float", "oob_fill (nan)", "not i32");
    d = packed(T(16U4_ALIGN8B));
    d.oob_fill = ASYNCRT_TENSORMAP_OOB_FILL_NAN;
    BAD(d, "oob_nan_float", "oob_fill (nan)", "not 16u4_align8b");
}

static void test_sm_rules(void **state)
{
    (void)state;
    asyncrt_tensormap_desc d = base(2);
    d.swizzle = SW(128B_ATOM_32B);
    expect_ok_sm(&d, 100, __LINE__);
    expect_ok_sm(&d, 0, __LINE__);
    expect_rule_sm(&d, 90, "sm_swizzle", "swizzle (128b_atom_32b)", "sm_90", __LINE__);
    d = packed(T(16U4_ALIGN8B));
    expect_ok_sm(&d, 100, __LINE__);
    expect_rule_sm(&d, 90, "sm_dtype", "dtype (16u4_align8b)", "sm_100", __LINE__);
    d = base(2);
    d.swizzle = SW(128B);
    expect_ok_sm(&d, 90, __LINE__);
}

/* ---- architecture, warnings, analyze ----------------------------------- */

/* Tensor maps need sm_90 (cuda.h); an error the driver prediction skips. */
static void test_sm_tma(void **state)
{
    (void)state;
    asyncrt_tensormap_desc d = base(2);
    static const int bad[] = {80, 89, 75, 1, -1};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char needle[32];
        snprintf(needle, sizeof needle, "target sm_%d", bad[i]);
        expect_rule_sm(&d, bad[i], "sm_tma", needle, "compute capability 9.0", __LINE__);
        const char *rule = "x";
        assert_int_equal(asyncrt__tensormap_predict_driver(&d, NULL, bad[i], &rule, NULL, 0), ASYNCRT_SUCCESS);
        assert_null(rule);
    }
    expect_ok_sm(&d, 90, __LINE__);
    expect_ok_sm(&d, 0, __LINE__);
    asyncrt_tensormap_im2col_desc c;
    memset(&c, 0, sizeof c);
    c.tiled = base(3);
    c.channels_per_pixel = 32;
    c.pixels_per_column = 64;
    const char *rule = NULL;
    assert_int_equal(asyncrt__tensormap_check(&c.tiled, &c, 86, &rule, NULL, 0), ASYNCRT_ERROR_TENSORMAP_INVALID);
    assert_string_equal(rule, "sm_tma");
}

/* Runs analyze (tiled or im2col) and checks the rule ids of the warnings, in
 * order (NULL-terminated), and that validate and the prediction still accept. */
static void expect_warnings(const asyncrt_tensormap_desc *d, const asyncrt_tensormap_im2col_desc *im2col,
                            uint64_t smem, const char *const *rules, const char *needle, int line)
{
    asyncrt_tensormap_check_options opts = {.size = sizeof opts, .smem_per_block = smem};
    asyncrt_tensormap_report r = ASYNCRT_TENSORMAP_REPORT_INIT;
    asyncrt_status s = im2col ? asyncrt_tensormap_analyze_im2col(im2col, &opts, &r)
                              : asyncrt_tensormap_analyze(d, &opts, &r);
    if (s != ASYNCRT_SUCCESS) fail_msg("line %d: analyze failed: %s: %s", line, r.error.rule, r.error.message);
    assert_null(r.error.rule);
    unsigned n = 0;
    while (rules[n]) n++;
    if (r.warning_count != n)
        fail_msg("line %d: %u warnings, expected %u (first: %s)", line, r.warning_count, n,
                 r.warning_count ? r.warnings[0].message : "none");
    for (unsigned i = 0; i < n; i++) {
        if (strcmp(r.warnings[i].rule, rules[i]) != 0)
            fail_msg("line %d: warning %u is %s, expected %s", line, i, r.warnings[i].rule, rules[i]);
        assert_true(strlen(r.warnings[i].message) > 0);
    }
    if (needle && (n == 0 || !strstr(r.warnings[0].message, needle)))
        fail_msg("line %d: \"%s\" lacks \"%s\"", line, n ? r.warnings[0].message : "", needle);
    /* Warnings never change the verdict, nor the driver prediction. */
    assert_int_equal(asyncrt__tensormap_check(d, im2col, 0, NULL, NULL, 0), ASYNCRT_SUCCESS);
    assert_int_equal(asyncrt__tensormap_predict_driver(d, im2col, 0, NULL, NULL, 0), ASYNCRT_SUCCESS);
    /* With warnings_as_errors they fail the check, the first one as the error. */
    opts.warnings_as_errors = true;
    s = im2col ? asyncrt_tensormap_analyze_im2col(im2col, &opts, &r) : asyncrt_tensormap_analyze(d, &opts, &r);
    assert_int_equal(s, n ? ASYNCRT_ERROR_TENSORMAP_INVALID : ASYNCRT_SUCCESS);
    if (n) {
        assert_string_equal(r.error.rule, rules[0]);
        assert_string_equal(r.error.message, r.warnings[0].message);
    } else {
        assert_null(r.error.rule);
    }
}

#define NONE_W ((const char *const[]){NULL})
#define W(...) ((const char *const[]){__VA_ARGS__, NULL})

static void test_warning_row_bytes16(void **state)
{
    (void)state;
    asyncrt_tensormap_desc d = base(2); /* 64 floats = 256 bytes per row */
    expect_warnings(&d, NULL, 0, NONE_W, NULL, __LINE__);
    d.dtype = T(U16);
    d.box_dim[0] = 8;
    d.global_dim[0] = 56; /* 112 bytes */
    expect_warnings(&d, NULL, 0, NONE_W, NULL, __LINE__);
    d.global_dim[0] = 50; /* 100 bytes: a store writes up to byte 112 */
    expect_warnings(&d, NULL, 0, W("row_bytes16"), "global_dim[0] (50) x 2 bytes = 100 bytes per row", __LINE__);
    d = base(1); /* rank 1 too: there the store writes past the tensor */
    d.global_dim[0] = 3;
    expect_warnings(&d, NULL, 0, W("row_bytes16"), "12 bytes", __LINE__);
    d = packed(T(16U4_ALIGN8B)); /* 66 x 4 bits = 33 bytes */
    d.global_dim[0] = 66;
    expect_warnings(&d, NULL, 0, W("row_bytes16"), "x 4 bits = 33 bytes", __LINE__);
    d.global_dim[0] = 64;
    expect_warnings(&d, NULL, 0, NONE_W, NULL, __LINE__);
    d = base(3); /* interleaved layouts are not rows of elements: no warning */
    d.interleave = IL(16B);
    d.global_dim[0] = 3;
    expect_warnings(&d, NULL, 0, NONE_W, NULL, __LINE__);
}

/* cuda.h: 32B interleave requires the 32B swizzle; the driver accepts any.
 * An error (the H100 loads other bytes, test_tensormap_swizzle_gpu); the
 * driver prediction accepts it. */
static void test_il32_swizzle(void **state)
{
    (void)state;
    asyncrt_tensormap_desc d = base(3);
    d.interleave = IL(32B);
    d.box_dim[0] = 8;
    d.swizzle = SW(32B);
    expect_warnings(&d, NULL, 0, NONE_W, NULL, __LINE__);
    static const asyncrt_tensormap_swizzle other[] = {SW(NONE), SW(64B), SW(128B)};
    for (size_t i = 0; i < 3; i++) {
        d.swizzle = other[i];
        assert_int_equal(asyncrt__tensormap_predict_driver(&d, NULL, 90, NULL, NULL, 0), ASYNCRT_SUCCESS);
        const char *rule = NULL;
        char msg[512];
        assert_int_equal(asyncrt__tensormap_check(&d, NULL, 90, &rule, msg, sizeof msg), ASYNCRT_ERROR_TENSORMAP_INVALID);
        assert_string_equal(rule, "il32_swizzle");
        assert_non_null(strstr(msg, "requires swizzle 32b"));
        assert_non_null(strstr(msg, asyncrt_tensormap_swizzle_name(other[i])));
    }
    d.interleave = IL(16B); /* other interleaves take any swizzle */
    d.swizzle = SW(128B);
    expect_warnings(&d, NULL, 0, NONE_W, NULL, __LINE__);
}

/* The driver's limit (233472 bytes) stays an error; a device's smaller
 * per-block opt-in maximum (232448 on the H100) gives a warning. */
static void test_box_smem_device(void **state)
{
    (void)state;
    asyncrt_tensormap_desc d = smem_box(227); /* 232448 bytes */
    expect_warnings(&d, NULL, 232448, NONE_W, NULL, __LINE__);
    d.box_dim[2] = 228; /* 233472: the driver's limit, one KiB over the H100's */
    expect_warnings(&d, NULL, 0, NONE_W, NULL, __LINE__);
    expect_warnings(&d, NULL, 233472, NONE_W, NULL, __LINE__);
    expect_warnings(&d, NULL, 232448, W("box_smem_device"), "233472 bytes of shared memory", __LINE__);
    d.element_stride[2] = 2; /* a kernel receives ceil(228 / 2) = 114 planes */
    expect_warnings(&d, NULL, 232448, NONE_W, NULL, __LINE__);
    d.element_stride[2] = 1;
    d.box_dim[2] = 229; /* over the driver's limit: an error whatever the device */
    asyncrt_tensormap_check_options opts = {.size = sizeof opts, .sm = 90, .smem_per_block = 1 << 20};
    asyncrt_tensormap_report r = ASYNCRT_TENSORMAP_REPORT_INIT;
    assert_int_equal(asyncrt_tensormap_analyze(&d, &opts, &r), ASYNCRT_ERROR_TENSORMAP_INVALID);
    assert_string_equal(r.error.rule, "box_smem");
    assert_int_equal(r.warning_count, 0);

    asyncrt_tensormap_im2col_desc c;
    memset(&c, 0, sizeof c);
    c.tiled = base(3);
    c.channels_per_pixel = 256; /* f32: 1 KiB per pixel */
    c.pixels_per_column = 227;
    expect_warnings(&c.tiled, &c, 232448, NONE_W, NULL, __LINE__);
    c.pixels_per_column = 228;
    expect_warnings(&c.tiled, &c, 232448, W("box_smem_device"), "233472 bytes", __LINE__);
}

static void test_analyze(void **state)
{
    (void)state;
    asyncrt_tensormap_report r = ASYNCRT_TENSORMAP_REPORT_INIT;
    asyncrt_tensormap_desc d = base(3);
    d.box_dim[0] = 10; /* an error: no warnings looked for */
    d.global_dim[0] = 3;
    assert_int_equal(asyncrt_tensormap_analyze(&d, NULL, &r), ASYNCRT_ERROR_TENSORMAP_INVALID);
    assert_string_equal(r.error.rule, "box_inner_multiple16");
    char msg[512];
    asyncrt_tensormap_validate(&d, msg, sizeof msg);
    assert_string_equal(r.error.message, msg);
    assert_int_equal(r.warning_count, 0);
    /* Two warnings at once, in a fixed order. */
    d = base(3);
    d.global_dim[0] = 3; /* 12-byte rows */
    asyncrt_tensormap_check_options opts = {.size = sizeof opts, .sm = 90, .smem_per_block = 64}; /* less than the box */
    assert_int_equal(asyncrt_tensormap_analyze(&d, &opts, &r), ASYNCRT_SUCCESS);
    assert_int_equal(r.warning_count, 2);
    assert_string_equal(r.warnings[0].rule, "row_bytes16");
    assert_string_equal(r.warnings[1].rule, "box_smem_device");
    /* The error of il32_swizzle, with the same box. */
    d = base(3);
    d.interleave = IL(32B);
    d.swizzle = SW(128B);
    d.box_dim[0] = 8;
    assert_int_equal(asyncrt_tensormap_analyze(&d, &opts, &r), ASYNCRT_ERROR_TENSORMAP_INVALID);
    assert_string_equal(r.error.rule, "il32_swizzle");
    /* sm through the options. */
    d = base(2);
    opts.sm = 80;
    assert_int_equal(asyncrt_tensormap_analyze(&d, &opts, &r), ASYNCRT_ERROR_TENSORMAP_INVALID);
    assert_string_equal(r.error.rule, "sm_tma");
    assert_int_equal(asyncrt_tensormap_analyze(NULL, NULL, &r), ASYNCRT_ERROR_INVALID_ARGUMENT);
    assert_string_equal(r.error.rule, "null");
    assert_int_equal(asyncrt_tensormap_analyze(&d, NULL, NULL), ASYNCRT_ERROR_INVALID_ARGUMENT);
    assert_int_equal(asyncrt_tensormap_analyze_im2col(NULL, NULL, &r), ASYNCRT_ERROR_INVALID_ARGUMENT);
}

/* NVIDIA's bit-85 workaround: when it applies, and what it changes. */
static void test_small_tensor_fix(void **state)
{
    (void)state;
    asyncrt_tensormap_desc d = base(3); /* 64 x 8 x 4 floats, dense: 8192 bytes */
    assert_int_equal(asyncrt__tensormap_span_bytes(&d), 8192);
    d.global_stride[1] = 4096; /* planes 4096 apart: 3 x 4096 + 7 x 256 + 256 */
    assert_int_equal(asyncrt__tensormap_span_bytes(&d), 3 * 4096 + 8 * 256);
    d = packed(T(16U4_ALIGN8B)); /* 8 rows of 256 values = 128 bytes, 256 apart */
    assert_int_equal(asyncrt__tensormap_span_bytes(&d), 7 * 256 + 128);
    d = base(2);
    d.global_dim[1] = TWO_POW_32;
    d.global_stride[0] = TWO_POW_40 - 16;
    assert_true(asyncrt__tensormap_span_bytes(&d) == UINT64_MAX); /* saturates */
    d.rank = 0;
    assert_true(asyncrt__tensormap_span_bytes(&d) == UINT64_MAX);
    assert_true(asyncrt__tensormap_span_bytes(NULL) == UINT64_MAX);

    const uint64_t small = 128 * 1024 - 1, large = 128 * 1024;
    assert_true(asyncrt__tensormap_needs_small_tensor_fix(100, 13000, small));
    assert_true(asyncrt__tensormap_needs_small_tensor_fix(103, 13010, 1));
    assert_true(asyncrt__tensormap_needs_small_tensor_fix(120, 13030, small));
    assert_true(asyncrt__tensormap_needs_small_tensor_fix(110, 12080, small));
    assert_false(asyncrt__tensormap_needs_small_tensor_fix(100, 13010, large));
    assert_false(asyncrt__tensormap_needs_small_tensor_fix(90, 13000, small)); /* the H100: unchanged */
    assert_false(asyncrt__tensormap_needs_small_tensor_fix(0, 13000, small));  /* no device known */
    assert_false(asyncrt__tensormap_needs_small_tensor_fix(130, 13000, small));
    assert_false(asyncrt__tensormap_needs_small_tensor_fix(100, 13040, small));
    assert_false(asyncrt__tensormap_needs_small_tensor_fix(100, 0, small));

    asyncrt_tensor_map map;
    for (int i = 0; i < 16; i++) map.opaque[i] = ~UINT64_C(0) - (uint64_t)i;
    asyncrt_tensor_map before = map;
    asyncrt__tensormap_apply_small_tensor_fix(&map);
    for (int i = 0; i < 16; i++)
        assert_true(map.opaque[i] == (i == 1 ? before.opaque[1] & ~(UINT64_C(1) << 21) : before.opaque[i]));
    assert_false(asyncrt__tensormap_bit85(&map));
    assert_true(asyncrt__tensormap_bit85(&before));
    asyncrt__tensormap_apply_small_tensor_fix(&map); /* idempotent */
    assert_true(map.opaque[1] == (before.opaque[1] & ~(UINT64_C(1) << 21)));
    assert_true(((const unsigned char *)&map)[8 + 2] == (unsigned char)(((const unsigned char *)&before)[8 + 2] & ~0x20));
}

/* encode logs warnings at ASYNCRT_LOG=1 before it needs the driver. */
static void test_encode_logs_warnings(void **state)
{
    (void)state;
    asyncrt_context *ctx;
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    asyncrt_context_set_log_level(ctx, 1);
    asyncrt_tensormap_desc d = base(2);
    d.dtype = T(U16);
    d.box_dim[0] = 8;
    d.global_dim[0] = 50;
    char path[] = "/tmp/asyncrt_tmap_logXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    fflush(stderr);
    int saved = dup(2);
    assert_true(saved >= 0 && dup2(fd, 2) == 2);
    asyncrt_tensor_map map;
    (void)asyncrt_tensormap_encode(ctx, &d, &map); /* fails later where there is no driver */
    asyncrt_context_set_log_level(ctx, 0);
    d.global_dim[0] = 51;
    (void)asyncrt_tensormap_encode(ctx, &d, &map); /* level 0: silent */
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char text[4096] = "";
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    close(fd);
    unlink(path);
    assert_true(n > 0);
    text[n] = '\0';
    assert_non_null(strstr(text, "tensor map: warning [row_bytes16]: global_dim[0] (50)"));
    assert_null(strstr(text, "global_dim[0] (51)"));
    asyncrt_context_destroy(ctx);
}

/* ---- im2col ------------------------------------------------------------ */

static asyncrt_tensormap_im2col_desc im2col(uint32_t rank)
{
    asyncrt_tensormap_im2col_desc c;
    memset(&c, 0, sizeof c);
    c.tiled = base(rank); /* C = 64 floats, W = 8, H = 4, D = 2 */
    c.channels_per_pixel = 32;
    c.pixels_per_column = 64;
    return c;
}

static void expect_im2col(const asyncrt_tensormap_im2col_desc *c, const char *rule, const char *needle,
                          int line)
{
    char msg[512];
    const char *got = NULL;
    asyncrt_status s = asyncrt__tensormap_check(&c->tiled, c, 0, &got, msg, sizeof msg);
    if (!rule) {
        if (s != ASYNCRT_SUCCESS) fail_msg("line %d: expected valid, got %s: %s", line, got, msg);
    } else if (s != ASYNCRT_ERROR_TENSORMAP_INVALID || !got || strcmp(got, rule) != 0 ||
               !strstr(msg, needle)) {
        fail_msg("line %d: expected %s with \"%s\", got %s: %s", line, rule, needle,
                 got ? got : "none", msg);
    }
    assert_int_equal(asyncrt_tensormap_validate_im2col(c, msg, sizeof msg), s);
}

static void test_im2col(void **state)
{
    (void)state;
    asyncrt_tensormap_im2col_desc c = im2col(3);
    expect_im2col(&c, NULL, NULL, __LINE__);
    c = im2col(2);
    expect_im2col(&c, "rank", "rank (2): must be 3..5 for im2col", __LINE__);

    static const int limit[6] = {0, 0, 0, 32768, 128, 16};
    for (uint32_t r = 3; r <= 5; r++) {
        c = im2col(r);
        c.lower_corner[r - 3] = -limit[r];
        c.upper_corner[r - 3] = limit[r] - 1;
        expect_im2col(&c, NULL, NULL, __LINE__);
        c.lower_corner[r - 3] = -limit[r] - 1;
        char needle[64];
        snprintf(needle, sizeof needle, "lower_corner[%u] (%d)", r - 3, -limit[r] - 1);
        expect_im2col(&c, "corner_range", needle, __LINE__);
        c.lower_corner[r - 3] = 0;
        c.upper_corner[r - 3] = limit[r];
        snprintf(needle, sizeof needle, "upper_corner[%u] (%d)", r - 3, limit[r]);
        expect_im2col(&c, "corner_range", needle, __LINE__);
    }

    c = im2col(4); /* W = 8: the box spans 8 - lower + upper pixels */
    c.lower_corner[0] = 3;
    c.upper_corner[0] = -4;
    expect_im2col(&c, NULL, NULL, __LINE__);
    c.upper_corner[0] = -5;
    expect_im2col(&c, "corner_area", "global_dim[1] (8) - lower_corner[0] (3) + upper_corner[0] (-5) = 0",
                  __LINE__);
    /* With interleave the driver checks corner i against global_dim[i]. */
    c = im2col(4);
    c.tiled.interleave = IL(16B);
    c.lower_corner[0] = 0;
    c.upper_corner[0] = -63; /* global_dim[0] (64) - 0 - 63 = 1: passes though W = 8 gives -55 */
    expect_im2col(&c, NULL, NULL, __LINE__);
    c.upper_corner[0] = -64;
    expect_im2col(&c, "corner_area", "global_dim[0] (64) - lower_corner[0] (0) + upper_corner[0] (-64) = 0",
                  __LINE__);

    c = im2col(3); /* channels x pixels x 4 bytes must fit in 233472 bytes */
    c.channels_per_pixel = 256;
    c.pixels_per_column = 228;
    expect_im2col(&c, NULL, NULL, __LINE__);
    c.pixels_per_column = 229;
    expect_im2col(&c, "box_smem", "234496 bytes", __LINE__);

    c = im2col(3);
    c.channels_per_pixel = 256;
    expect_im2col(&c, NULL, NULL, __LINE__);
    c.channels_per_pixel = 257;
    expect_im2col(&c, "channels_range", "channels_per_pixel (257)", __LINE__);
    c.channels_per_pixel = 0;
    expect_im2col(&c, "channels_range", "channels_per_pixel (0)", __LINE__);
    c.channels_per_pixel = 10;
    expect_im2col(&c, "box_inner_multiple16", "channels_per_pixel (10) x 4 bytes = 40 bytes", __LINE__);
    c.channels_per_pixel = 32;
    c.tiled.swizzle = SW(64B);
    expect_im2col(&c, "swizzle_span", "channels_per_pixel (32) x 4 bytes = 128 bytes", __LINE__);

    c = im2col(3);
    c.pixels_per_column = 1024;
    expect_im2col(&c, NULL, NULL, __LINE__);
    c.pixels_per_column = 1025;
    expect_im2col(&c, "pixels_range", "pixels_per_column (1025)", __LINE__);
    c.pixels_per_column = 0;
    expect_im2col(&c, "pixels_range", "pixels_per_column (0)", __LINE__);

    c = im2col(3);
    c.tiled.box_dim[0] = 0; /* not used by im2col */
    expect_im2col(&c, NULL, NULL, __LINE__);
}

/* ---- helpers ----------------------------------------------------------- */

static void test_null_arguments(void **state)
{
    (void)state;
    char msg[64];
    assert_int_equal(asyncrt_tensormap_validate(NULL, msg, sizeof msg), ASYNCRT_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(msg, "NULL"));
    asyncrt_tensormap_desc d = base(2);
    d.box_dim[0] = 10;
    assert_int_equal(asyncrt_tensormap_validate(&d, NULL, 0), ASYNCRT_ERROR_TENSORMAP_INVALID);
    assert_int_equal(asyncrt_tensormap_validate(&d, msg, 8), ASYNCRT_ERROR_TENSORMAP_INVALID);
    assert_int_equal(strlen(msg), 7); /* truncated, terminated */
}

static void test_describe_dense(void **state)
{
    (void)state;
    const uint64_t shape[3] = {5, 37, 100}; /* numpy order: 5 planes of 37 rows of 100 */
    const uint32_t box[3] = {2, 16, 32};
    asyncrt_tensormap_desc d;
    assert_int_equal(asyncrt_tensormap_describe_dense(&d, T(F16), 0x200000, 3, shape, box),
                     ASYNCRT_SUCCESS);
    assert_int_equal(d.global_dim[0], 100);
    assert_int_equal(d.global_dim[1], 37);
    assert_int_equal(d.global_dim[2], 5);
    assert_int_equal(d.global_stride[0], 200);
    assert_int_equal(d.global_stride[1], 200 * 37);
    assert_int_equal(d.box_dim[0], 32);
    assert_int_equal(d.box_dim[2], 2);
    assert_int_equal(d.element_stride[2], 1);
    assert_int_equal(d.address, 0x200000);
    /* 200-byte rows are not a multiple of 16: validation says so. */
    char msg[256];
    assert_int_equal(asyncrt_tensormap_validate(&d, msg, sizeof msg), ASYNCRT_ERROR_TENSORMAP_INVALID);
    assert_non_null(strstr(msg, "global_stride[0] (200)"));

    const uint64_t packed_shape[2] = {4, 256};
    const uint32_t packed_box[2] = {1, 32};
    assert_int_equal(asyncrt_tensormap_describe_dense(&d, T(16U4_ALIGN8B), 0x200000, 2, packed_shape,
                                                      packed_box),
                     ASYNCRT_SUCCESS);
    assert_int_equal(d.global_stride[0], 128);
    assert_int_equal(asyncrt_tensormap_validate(&d, msg, sizeof msg), ASYNCRT_SUCCESS);

    const uint64_t huge[5] = {TWO_POW_32, TWO_POW_32, TWO_POW_32, 16, 16};
    const uint32_t ones[5] = {1, 1, 1, 1, 16};
    assert_int_equal(asyncrt_tensormap_describe_dense(&d, T(U8), 0, 5, huge, ones), ASYNCRT_SUCCESS);
    assert_true(d.global_stride[3] == UINT64_MAX); /* 16 x 16 x 2^64 bytes: saturated */
    assert_int_equal(asyncrt_tensormap_validate(&d, msg, sizeof msg), ASYNCRT_ERROR_TENSORMAP_INVALID);

    assert_int_equal(asyncrt_tensormap_describe_dense(&d, T(U8), 0, 0, shape, box),
                     ASYNCRT_ERROR_INVALID_ARGUMENT);
    assert_int_equal(asyncrt_tensormap_describe_dense(&d, T(U8), 0, 6, huge, ones),
                     ASYNCRT_ERROR_INVALID_ARGUMENT);
    assert_int_equal(asyncrt_tensormap_describe_dense(NULL, T(U8), 0, 1, shape, box),
                     ASYNCRT_ERROR_INVALID_ARGUMENT);
}

static void test_widest_swizzle(void **state)
{
    (void)state;
    assert_int_equal(asyncrt_tensormap_widest_swizzle(T(F16), 64), SW(128B));
    assert_int_equal(asyncrt_tensormap_widest_swizzle(T(F16), 32), SW(64B));
    assert_int_equal(asyncrt_tensormap_widest_swizzle(T(F16), 16), SW(32B));
    assert_int_equal(asyncrt_tensormap_widest_swizzle(T(F16), 8), SW(NONE));
    assert_int_equal(asyncrt_tensormap_widest_swizzle(T(F16), 48), SW(NONE));
    assert_int_equal(asyncrt_tensormap_widest_swizzle(T(F16), 128), SW(NONE));
    assert_int_equal(asyncrt_tensormap_widest_swizzle(T(F64), 16), SW(128B));
    assert_int_equal(asyncrt_tensormap_widest_swizzle(T(16U4_ALIGN8B), 256), SW(128B));
    assert_int_equal(asyncrt_tensormap_widest_swizzle(T(16U6_ALIGN16B), 128), SW(128B));
    assert_int_equal(asyncrt_tensormap_widest_swizzle(ASYNCRT_TENSORMAP_DTYPE_COUNT, 32), SW(NONE));
    /* What it picks is valid. */
    asyncrt_tensormap_desc d = base(2);
    d.box_dim[0] = 16;
    d.swizzle = asyncrt_tensormap_widest_swizzle(d.dtype, d.box_dim[0]);
    assert_int_equal(d.swizzle, SW(64B));
    OK(d);
}

static void test_box_bytes(void **state)
{
    (void)state;
    asyncrt_tensormap_desc d = base(3); /* box 32 x 2 x 2 floats */
    assert_int_equal(asyncrt_tensormap_box_bytes(&d), 32 * 2 * 2 * 4);
    d.element_stride[1] = 2;
    d.box_dim[1] = 3; /* ceil(3 / 2) = 2 */
    d.element_stride[0] = 8; /* ignored without interleave */
    assert_int_equal(asyncrt_tensormap_box_bytes(&d), 32 * 2 * 2 * 4);
    d = packed(T(16U4_ALIGN16B));
    d.box_dim[1] = 2;
    assert_int_equal(asyncrt_tensormap_box_bytes(&d), 128 * 2); /* a byte per value in smem */
    d = packed(T(16U4_ALIGN8B));
    assert_int_equal(asyncrt_tensormap_box_bytes(&d), 32 * 2 / 2);
    d.rank = 0;
    assert_int_equal(asyncrt_tensormap_box_bytes(&d), 0);
}

static void test_dump(void **state)
{
    (void)state;
    asyncrt_tensormap_desc d = base(2);
    d.swizzle = SW(128B);
    char buf[1024];
    size_t n = asyncrt_tensormap_dump(&d, buf, sizeof buf);
    assert_int_equal(n, strlen(buf));
    assert_int_equal(asyncrt_tensormap_dump(&d, NULL, 0), n);
    assert_non_null(strstr(buf, "dtype = f32 (7)\n"));
    assert_non_null(strstr(buf, "rank = 2\n"));
    assert_non_null(strstr(buf, "address = 0x100000\n"));
    assert_non_null(strstr(buf, "global_dim = {64, 8}"));
    assert_non_null(strstr(buf, "global_stride = {256} bytes"));
    assert_non_null(strstr(buf, "box_dim = {32, 2}\n"));
    assert_non_null(strstr(buf, "swizzle = 128b (3)\n"));
    assert_non_null(strstr(buf, "oob_fill = zero (0)\n"));
    char small[16];
    assert_int_equal(asyncrt_tensormap_dump(&d, small, sizeof small), n);
    assert_int_equal(strlen(small), sizeof small - 1);
    d.dtype = (asyncrt_tensormap_dtype)99;
    asyncrt_tensormap_dump(&d, buf, sizeof buf);
    assert_non_null(strstr(buf, "dtype = ? (99)"));

    asyncrt_tensormap_im2col_desc c = im2col(4);
    c.lower_corner[0] = -1;
    c.upper_corner[1] = 2;
    asyncrt_tensormap_dump_im2col(&c, buf, sizeof buf);
    assert_non_null(strstr(buf, "lower_corner = {-1, 0}"));
    assert_non_null(strstr(buf, "upper_corner = {0, 2}"));
    assert_non_null(strstr(buf, "channels_per_pixel = 32\n"));
    assert_null(strstr(buf, "box_dim"));
}

static void test_names(void **state)
{
    (void)state;
    static const char *const dtypes[] = {"u8", "u16", "u32", "i32", "u64", "i64", "f16", "f32", "f64",
                                         "bf16", "f32_ftz", "tf32", "tf32_ftz", "16u4_align8b",
                                         "16u4_align16b", "16u6_align16b"};
    for (int i = 0; i < ASYNCRT_TENSORMAP_DTYPE_COUNT; i++) {
        asyncrt_tensormap_dtype t = ASYNCRT_TENSORMAP_DTYPE_COUNT;
        assert_true(asyncrt_tensormap_dtype_parse(dtypes[i], &t));
        assert_int_equal(t, i);
        assert_string_equal(asyncrt_tensormap_dtype_name(t), dtypes[i]);
    }
    static const char *const swizzles[] = {"none", "32b", "64b", "128b", "128b_atom_32b",
                                           "128b_atom_32b_flip_8b", "128b_atom_64b"};
    for (int i = 0; i < ASYNCRT_TENSORMAP_SWIZZLE_COUNT; i++) {
        asyncrt_tensormap_swizzle s = ASYNCRT_TENSORMAP_SWIZZLE_COUNT;
        assert_true(asyncrt_tensormap_swizzle_parse(swizzles[i], &s));
        assert_int_equal(s, i);
        assert_string_equal(asyncrt_tensormap_swizzle_name(s), swizzles[i]);
    }
    assert_null(asyncrt_tensormap_dtype_name(ASYNCRT_TENSORMAP_DTYPE_COUNT));
    assert_null(asyncrt_tensormap_swizzle_name(ASYNCRT_TENSORMAP_SWIZZLE_COUNT));
    assert_null(asyncrt_tensormap_dtype_name((asyncrt_tensormap_dtype)-1));

    asyncrt_tensormap_dtype t = T(U8);
    assert_true(asyncrt_tensormap_dtype_parse("BF16", &t));
    assert_int_equal(t, T(BF16));
    assert_false(asyncrt_tensormap_dtype_parse("f8", &t));
    assert_false(asyncrt_tensormap_dtype_parse("", &t));
    assert_false(asyncrt_tensormap_dtype_parse(NULL, &t));
    assert_int_equal(t, T(BF16)); /* untouched on failure */

    asyncrt_tensormap_interleave il = IL(NONE);
    assert_true(asyncrt_tensormap_interleave_parse("32b", &il));
    assert_int_equal(il, IL(32B));
    assert_false(asyncrt_tensormap_interleave_parse("8b", &il));
    assert_string_equal(asyncrt_tensormap_interleave_name(IL(16B)), "16b");
    assert_null(asyncrt_tensormap_interleave_name(ASYNCRT_TENSORMAP_INTERLEAVE_COUNT));

    asyncrt_tensormap_l2_promotion l2 = ASYNCRT_TENSORMAP_L2_PROMOTION_NONE;
    assert_true(asyncrt_tensormap_l2_promotion_parse("256b", &l2));
    assert_int_equal(l2, ASYNCRT_TENSORMAP_L2_PROMOTION_256B);
    assert_false(asyncrt_tensormap_l2_promotion_parse("512b", &l2));
    assert_string_equal(asyncrt_tensormap_l2_promotion_name(ASYNCRT_TENSORMAP_L2_PROMOTION_64B), "64b");

    asyncrt_tensormap_oob_fill oob = ASYNCRT_TENSORMAP_OOB_FILL_NAN;
    assert_true(asyncrt_tensormap_oob_fill_parse("none", &oob));
    assert_int_equal(oob, ASYNCRT_TENSORMAP_OOB_FILL_ZERO);
    assert_true(asyncrt_tensormap_oob_fill_parse("NaN", &oob));
    assert_int_equal(oob, ASYNCRT_TENSORMAP_OOB_FILL_NAN);
    assert_false(asyncrt_tensormap_oob_fill_parse("one", &oob));
    assert_string_equal(asyncrt_tensormap_oob_fill_name(ASYNCRT_TENSORMAP_OOB_FILL_ZERO), "zero");

    assert_int_equal(asyncrt_tensormap_dtype_bits(T(U8)), 8);
    assert_int_equal(asyncrt_tensormap_dtype_bits(T(F64)), 64);
    assert_int_equal(asyncrt_tensormap_dtype_bits(T(TF32_FTZ)), 32);
    assert_int_equal(asyncrt_tensormap_dtype_bits(T(16U4_ALIGN16B)), 4);
    assert_int_equal(asyncrt_tensormap_dtype_bits(T(16U6_ALIGN16B)), 6);
    assert_int_equal(asyncrt_tensormap_dtype_bits(ASYNCRT_TENSORMAP_DTYPE_COUNT), 0);
}

/* encode explains a broken rule before it needs the driver. */
static void test_encode_without_driver_names_the_rule(void **state)
{
    (void)state;
    asyncrt_context *ctx;
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    asyncrt_tensormap_desc d = base(2);
    d.box_dim[0] = 10;
    asyncrt_tensor_map map;
    assert_status(ctx, ASYNCRT_ERROR_TENSORMAP_INVALID, asyncrt_tensormap_encode(ctx, &d, &map));
    assert_non_null(strstr(asyncrt_context_last_error(ctx),
                           "box_dim[0] (10) x 4 bytes = 40 bytes: must be a multiple of 16 when "
                           "interleave is NONE"));
    asyncrt_tensormap_im2col_desc c = im2col(3);
    c.pixels_per_column = 2000;
    assert_status(ctx, ASYNCRT_ERROR_TENSORMAP_INVALID, asyncrt_tensormap_encode_im2col(ctx, &c, &map));
    assert_non_null(strstr(asyncrt_context_last_error(ctx), "pixels_per_column (2000)"));
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_tensormap_encode(ctx, NULL, &map));
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_tensormap_replace_address(ctx, NULL, 0));
    assert_status(ctx, ASYNCRT_ERROR_TENSORMAP_INVALID,
                  asyncrt_tensormap_replace_address(ctx, &map, 0x100008));
    assert_non_null(strstr(asyncrt_context_last_error(ctx), "address (0x100008)"));
    asyncrt_context_destroy(ctx);
}

static void test_layout_matches_cutensormap(void **state)
{
    (void)state;
    assert_int_equal(sizeof(asyncrt_tensor_map), sizeof(CUtensorMap));
    assert_int_equal(_Alignof(asyncrt_tensor_map), _Alignof(CUtensorMap));
}

/* The GPU tests' kernels compile for sm_90 here, so syntax errors show up without a GPU. */
static void compile_for_sm90(const char *name, const char *source, const char *const *defines, size_t count)
{
    asyncrt_context *ctx;
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    asyncrt_compile_options opts = ASYNCRT_COMPILE_OPTIONS_INIT;
    opts.arch = "sm_90";
    opts.defines = defines;
    opts.define_count = count;
    asyncrt_program *program = NULL;
    assert_ok(ctx, asyncrt_program_compile(ctx, name, source, &opts, &program));
    size_t size = 0;
    assert_non_null(asyncrt_program_image(program, &size));
    assert_true(size > 0);
    asyncrt_program_destroy(program);
    asyncrt_context_destroy(ctx);
}

static void test_tma_kernel_compiles_for_sm90(void **state)
{
    (void)state;
    compile_for_sm90("tma_tile_kernel.cu", tma_tile_kernel_source, tma_tile_kernel_defines,
                     sizeof tma_tile_kernel_defines / sizeof *tma_tile_kernel_defines);
    compile_for_sm90("tma_swizzle_kernel.cu", tma_swizzle_kernel_source, tma_swizzle_kernel_defines,
                     sizeof tma_swizzle_kernel_defines / sizeof *tma_swizzle_kernel_defines);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_base_is_valid_for_every_rank),
        cmocka_unit_test(test_enums),
        cmocka_unit_test(test_rank),
        cmocka_unit_test(test_address),
        cmocka_unit_test(test_global_dim),
        cmocka_unit_test(test_global_stride),
        cmocka_unit_test(test_strides_need_not_cover_the_previous_dimension),
        cmocka_unit_test(test_box_dim),
        cmocka_unit_test(test_element_stride),
        cmocka_unit_test(test_swizzle),
        cmocka_unit_test(test_box_smem),
        cmocka_unit_test(test_packed_types),
        cmocka_unit_test(test_oob_fill),
        cmocka_unit_test(test_sm_rules),
        cmocka_unit_test(test_sm_tma),
        cmocka_unit_test(test_warning_row_bytes16),
        cmocka_unit_test(test_il32_swizzle),
        cmocka_unit_test(test_box_smem_device),
        cmocka_unit_test(test_analyze),
        cmocka_unit_test(test_small_tensor_fix),
        cmocka_unit_test(test_encode_logs_warnings),
        cmocka_unit_test(test_im2col),
        cmocka_unit_test(test_null_arguments),
        cmocka_unit_test(test_describe_dense),
        cmocka_unit_test(test_widest_swizzle),
        cmocka_unit_test(test_box_bytes),
        cmocka_unit_test(test_dump),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_encode_without_driver_names_the_rule),
        cmocka_unit_test(test_layout_matches_cutensormap),
        cmocka_unit_test(test_tma_kernel_compiles_for_sm90),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
