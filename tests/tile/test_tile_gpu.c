/* The tile ops on the GPU, every path (TMA, LDGSTS, plain, and LDGSTS through
 * compute_80 PTX) against the CPU references on fresh random data: odd and
 * prime shapes, 1 x N and N x 1, partial tiles, unaligned base pointers, every
 * stencil radius, weights and expressions. Outputs are poisoned with 0xFF
 * bytes first (no expected value here is all ones), every element is
 * compared bit for bit, and 64 bytes past the end must stay poisoned.
 * Built a second time as test_tile_variants_gpu (TILE_TEST_VARIANTS=1):
 * every ASYNCRT_TILE_TUNE variant on a few ops and shapes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"
#include "tile_reference.h"

#define GUARD 64

/* test_tile_variants_gpu builds this file with 1: the tuned variants only. */
#ifndef TILE_TEST_VARIANTS
#define TILE_TEST_VARIANTS 0
#endif

static asyncrt_context *g_ctx;

typedef struct op_case {
    asyncrt_tile_kind kind;
    asyncrt_dtype dtype;
    int radius;
    bool expression; /* MAP / STENCIL: the tests' expression; else identity / weights */
} op_case;

static const op_case k_ops[] = {
    {ASYNCRT_TILE_TRANSPOSE, ASYNCRT_F32, 0, false}, {ASYNCRT_TILE_TRANSPOSE, ASYNCRT_I32, 0, false},
    {ASYNCRT_TILE_TRANSPOSE, ASYNCRT_U32, 0, false}, {ASYNCRT_TILE_TRANSPOSE, ASYNCRT_F16, 0, false},
    {ASYNCRT_TILE_TRANSPOSE, ASYNCRT_BF16, 0, false}, {ASYNCRT_TILE_TRANSPOSE, ASYNCRT_F32, 0, true},
    {ASYNCRT_TILE_MAP, ASYNCRT_F32, 0, true},        {ASYNCRT_TILE_MAP, ASYNCRT_I32, 0, true},
    {ASYNCRT_TILE_MAP, ASYNCRT_F16, 0, true},        {ASYNCRT_TILE_MAP, ASYNCRT_BF16, 0, true},
    {ASYNCRT_TILE_STENCIL, ASYNCRT_F32, 1, false},   {ASYNCRT_TILE_STENCIL, ASYNCRT_F32, 2, false},
    {ASYNCRT_TILE_STENCIL, ASYNCRT_F32, 3, false},   {ASYNCRT_TILE_STENCIL, ASYNCRT_F32, 4, false},
    {ASYNCRT_TILE_STENCIL, ASYNCRT_F16, 1, false},   {ASYNCRT_TILE_STENCIL, ASYNCRT_BF16, 3, false},
    {ASYNCRT_TILE_STENCIL, ASYNCRT_F32, 1, true},    {ASYNCRT_TILE_STENCIL, ASYNCRT_F32, 2, true},
    {ASYNCRT_TILE_STENCIL, ASYNCRT_F32, 3, true},    {ASYNCRT_TILE_STENCIL, ASYNCRT_F32, 4, true},
    {ASYNCRT_TILE_STENCIL, ASYNCRT_I32, 2, true},    {ASYNCRT_TILE_STENCIL, ASYNCRT_BF16, 4, true},
};

/* rows, cols, and byte offsets of in and out from a 256-byte aligned base. */
static const struct {
    size_t rows, cols, in_off, out_off;
} k_shapes[] = {
    {1, 1, 0, 0},     {1, 1000, 0, 0},   {1000, 1, 0, 0},  {97, 131, 0, 0},   {64, 64, 0, 0},
    {200, 264, 0, 0}, {1029, 520, 0, 0}, {512, 1024, 0, 0}, {33, 4096, 0, 0}, {200, 264, 1, 0},
    {200, 264, 0, 1}, {97, 131, 1, 1},
};

static void random_matrix(asyncrt_dtype t, void *m, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (t == ASYNCRT_I32 || t == ASYNCRT_U32) ((uint32_t *)m)[i] = test_random_u32() >> 12;
        else if (t == ASYNCRT_F32) ((float *)m)[i] = test_random_float(-4.0f, 4.0f);
        else ref_store_float(t, m, i, test_random_float(-4.0f, 4.0f));
    }
}

static char *describe(const op_case *c, asyncrt_op_path path, const char *arch)
{
    static char text[224];
    static const char *const kinds[] = {"map", "transpose", "stencil"};
    const char *tune = getenv("ASYNCRT_TILE_TUNE");
    snprintf(text, sizeof text, "%s %s%s radius %d, %s path (%s), ASYNCRT_TILE_TUNE='%.60s'", kinds[c->kind],
             asyncrt_dtype_name(c->dtype), c->expression ? " expression" : "", c->radius, asyncrt_op_path_name(path),
             arch ? arch : "auto", tune ? tune : "");
    return text;
}

static void run_shape(asyncrt_tile_op *op, const op_case *c, const float *w, size_t s, const char *what)
{
    size_t rows = k_shapes[s].rows, cols = k_shapes[s].cols, e = asyncrt_dtype_size(c->dtype);
    size_t n = rows * cols, bytes = n * e;
    size_t in_off = k_shapes[s].in_off * e, out_off = k_shapes[s].out_off * e;
    unsigned char *in = malloc(bytes), *expect = malloc(bytes), *got = malloc(bytes + GUARD);
    assert_non_null(in);
    assert_non_null(expect);
    assert_non_null(got);
    random_matrix(c->dtype, in, n);
    if (c->kind != ASYNCRT_TILE_STENCIL) ref_tile_map(c->kind, !c->expression, c->dtype, rows, cols, in, expect);
    else if (c->expression) ref_stencil_expression(c->dtype, c->radius, rows, cols, in, expect);
    else ref_stencil_weights(c->dtype, c->radius, w, rows, cols, in, expect);

    asyncrt_deviceptr d_in = 0, d_out = 0;
    assert_ok(g_ctx, asyncrt_memory_alloc(g_ctx, bytes + 256, &d_in));
    assert_ok(g_ctx, asyncrt_memory_alloc(g_ctx, bytes + 256 + GUARD, &d_out));
    assert_ok(g_ctx, asyncrt_memory_to_device(g_ctx, d_in + in_off, in, bytes));
    assert_ok(g_ctx, asyncrt_memory_fill(g_ctx, d_out, 0xFF, bytes + 256 + GUARD, NULL));
    asyncrt_op_path ran = asyncrt_tile_launch_path(op, rows, cols, d_in + in_off, d_out + out_off);
    if (asyncrt_tile_path_of(op) == ASYNCRT_PATH_TMA && s == 7) assert_int_equal(ran, ASYNCRT_PATH_TMA);
    assert_ok(g_ctx, asyncrt_tile_launch(op, rows, cols, d_in + in_off, d_out + out_off, NULL));
    assert_ok(g_ctx, asyncrt_synchronize(g_ctx));
    assert_ok(g_ctx, asyncrt_memory_to_host(g_ctx, got, d_out + out_off, bytes + GUARD));

    size_t out_cols = c->kind == ASYNCRT_TILE_TRANSPOSE ? rows : cols;
    for (size_t i = 0; i < n; i++)
        if (memcmp(got + i * e, expect + i * e, e) != 0) {
            uint32_t g = 0, x = 0;
            memcpy(&g, got + i * e, e);
            memcpy(&x, expect + i * e, e);
            fail_msg("%s, %zu x %zu (offsets %zu, %zu; ran %s): out[%zu][%zu] is 0x%x, expected 0x%x", what, rows,
                     cols, in_off, out_off, asyncrt_op_path_name(ran), i / out_cols, i % out_cols, g, x);
        }
    for (size_t i = 0; i < GUARD; i++)
        if (got[bytes + i] != 0xFF)
            fail_msg("%s, %zu x %zu: byte %zu past the end of out was written", what, rows, cols, i);
    assert_ok(g_ctx, asyncrt_memory_free(g_ctx, d_in));
    assert_ok(g_ctx, asyncrt_memory_free(g_ctx, d_out));
    free(in);
    free(expect);
    free(got);
}

/* The shapes the tuned variants run on: edges, partial tiles, unaligned rows. */
static const size_t k_few_shapes[] = {1, 2, 3, 6, 7, 9, 11};

static void run_ops(asyncrt_op_path path, const char *arch, const op_case *ops, size_t count, bool few)
{
    for (size_t k = 0; k < count; k++) {
        const op_case *c = &ops[k];
        const char *what = describe(c, path, arch);
        float w[81];
        for (int i = 0; i < 81; i++) w[i] = test_random_float(-1.0f, 1.0f);
        char expression[128];
        snprintf(expression, sizeof expression, "out = in(0, 0) * 2 + in(-%d, %d) + in(%d, -%d);", c->radius,
                 c->radius, c->radius - 1, c->radius);
        asyncrt_tile_desc d = {.size = sizeof d,
                               .kind = c->kind, .dtype = c->dtype, .radius = c->radius, .path = path, .arch = arch};
        if (c->kind == ASYNCRT_TILE_STENCIL) {
            if (c->expression) d.expression = expression;
            else d.weights = w;
        } else if (c->expression) {
            d.expression = "out = v * 2 + (y * 7 + x);";
        }
        asyncrt_tile_op *op = NULL;
        asyncrt_status st = asyncrt_tile_create(g_ctx, &d, &op);
        if (st != ASYNCRT_SUCCESS) fail_msg("%s: %s", what, asyncrt_context_last_error(g_ctx));
        size_t shapes = few ? sizeof k_few_shapes / sizeof k_few_shapes[0] : sizeof k_shapes / sizeof k_shapes[0];
        for (size_t s = 0; s < shapes; s++) run_shape(op, c, w, few ? k_few_shapes[s] : s, what);
        asyncrt_tile_destroy(op);
    }
}

static void run_path(asyncrt_op_path path, const char *arch)
{
    run_ops(path, arch, k_ops, sizeof k_ops / sizeof k_ops[0], false);
}

static int cc(void)
{
    const asyncrt_device_info *dev = asyncrt_context_device(g_ctx);
    return dev->cc_major * 10 + dev->cc_minor;
}

static void tma_path(void **state)
{
    (void)state;
    if (cc() < 90) skip();
    run_path(ASYNCRT_PATH_TMA, NULL);
}

static void ldgsts_path(void **state)
{
    (void)state;
    if (cc() < 80) skip();
    run_path(ASYNCRT_PATH_LDGSTS, NULL);
}

static void ldgsts_path_through_compute_80(void **state)
{
    (void)state;
    if (cc() < 80) skip();
    test_skip_unless_loadable(g_ctx, "compute_80"); /* PTX from an NVRTC newer than the driver */
    run_path(ASYNCRT_PATH_LDGSTS, "compute_80");
}

static void plain_path(void **state)
{
    (void)state;
    run_path(ASYNCRT_PATH_PLAIN, NULL);
}

/* Every ASYNCRT_TILE_TUNE variant and shape (the default is covered above)
 * on a few ops that exercise it: both element sizes, transposed or not,
 * radii 1 and 4, persistent grids with rings of stages (ctas=1: one CTA per
 * SM, so the 1029 x 520 shape gives some CTAs two tiles or more). `build`
 * NULL: the device's own, every path; "compute_80": the LDGSTS path from
 * that PTX. */
static void run_tuned(const char *build)
{
    static const op_case transposes[] = {
        {ASYNCRT_TILE_TRANSPOSE, ASYNCRT_F32, 0, false}, {ASYNCRT_TILE_TRANSPOSE, ASYNCRT_BF16, 0, true},
        {ASYNCRT_TILE_MAP, ASYNCRT_F32, 0, true},        {ASYNCRT_TILE_MAP, ASYNCRT_F16, 0, true},
    };
    static const op_case stencils[] = {
        {ASYNCRT_TILE_STENCIL, ASYNCRT_F32, 1, false}, {ASYNCRT_TILE_STENCIL, ASYNCRT_BF16, 4, false},
        {ASYNCRT_TILE_STENCIL, ASYNCRT_F32, 2, true},
    };
    static const char *const transpose_tunes[] = {"variant=blocks,minctas=0", "variant=rows",
                                                  "variant=staged,threads=64", "variant=staged,minctas=0",
                                                  "variant=rows,threads=192", "variant=staged,ctas=1,stages=3",
                                                  "variant=blocks,ctas=1,stages=2", "variant=staged,l2=256"};
    static const char *const stencil_tunes[] = {"opt=8", "opt=32", "threads=128", "threads=512,opt=32",
                                                "ctas=1,stages=3", "tw=256,opt=8", "tw=256,threads=512,opt=32",
                                                "l2=128"};
    int device_cc = cc();
    for (int pass = 0; pass < 2; pass++) {
        const char *const *tunes = pass ? stencil_tunes : transpose_tunes;
        size_t n = pass ? sizeof stencil_tunes / sizeof *tunes : sizeof transpose_tunes / sizeof *tunes;
        for (size_t t = 0; t < n; t++) {
            test_context_setenv(g_ctx, "ASYNCRT_TILE_TUNE", tunes[t]);
            const op_case *ops = pass ? stencils : transposes;
            size_t count = pass ? sizeof stencils / sizeof *ops : sizeof transposes / sizeof *ops;
            if (build) {
                run_ops(ASYNCRT_PATH_LDGSTS, build, ops, count, true);
                continue;
            }
            run_ops(ASYNCRT_PATH_PLAIN, NULL, ops, count, true);
            if (device_cc >= 80) run_ops(ASYNCRT_PATH_LDGSTS, NULL, ops, count, true);
            if (device_cc >= 90 && !strstr(tunes[t], "variant") && !strstr(tunes[t], "tw=256")) /* TMA: tw=128 */
                run_ops(ASYNCRT_PATH_TMA, NULL, ops, count, true);
        }
    }
    test_context_setenv(g_ctx, "ASYNCRT_TILE_TUNE", NULL);
}

static void tuned_variants(void **state)
{
    (void)state;
    run_tuned(NULL);
}

static void tuned_variants_through_compute_80(void **state)
{
    (void)state;
    if (cc() < 80) skip();
    test_skip_unless_loadable(g_ctx, "compute_80"); /* PTX from an NVRTC newer than the driver */
    run_tuned("compute_80");
}

/* A launch repeated on other buffers gets maps for them (the op caches the
 * last ones), and a MAP may run in place. */
static void repeated_and_in_place_launches(void **state)
{
    (void)state;
    asyncrt_tile_desc d = {.size = sizeof d,
                           .kind = ASYNCRT_TILE_MAP, .dtype = ASYNCRT_F32, .expression = "out = v * 2 + (y * 7 + x);"};
    asyncrt_tile_op *op = NULL;
    assert_ok(g_ctx, asyncrt_tile_create(g_ctx, &d, &op));
    size_t rows = 300, cols = 1024, n = rows * cols;
    float *in = malloc(n * 4), *expect = malloc(n * 4), *got = malloc(n * 4);
    assert_non_null(in);
    assert_non_null(expect);
    assert_non_null(got);
    asyncrt_deviceptr a, b;
    assert_ok(g_ctx, asyncrt_memory_alloc(g_ctx, n * 4, &a));
    assert_ok(g_ctx, asyncrt_memory_alloc(g_ctx, n * 4, &b));
    for (int round = 0; round < 3; round++) {
        random_matrix(ASYNCRT_F32, in, n);
        ref_tile_map(ASYNCRT_TILE_MAP, false, ASYNCRT_F32, rows, cols, in, expect);
        asyncrt_deviceptr src = round == 1 ? b : a, dst = round == 0 ? b : round == 1 ? a : a;
        assert_ok(g_ctx, asyncrt_memory_to_device(g_ctx, src, in, n * 4));
        if (dst != src) assert_ok(g_ctx, asyncrt_memory_fill(g_ctx, dst, 0xFF, n * 4, NULL));
        assert_ok(g_ctx, asyncrt_tile_launch(op, rows, cols, src, dst, NULL));
        assert_ok(g_ctx, asyncrt_memory_to_host(g_ctx, got, dst, n * 4));
        for (size_t i = 0; i < n; i++)
            if (memcmp(&got[i], &expect[i], 4) != 0)
                fail_msg("round %d: element %zu is %g, expected %g", round, i, (double)got[i], (double)expect[i]);
    }
    assert_ok(g_ctx, asyncrt_memory_free(g_ctx, a));
    assert_ok(g_ctx, asyncrt_memory_free(g_ctx, b));
    free(in);
    free(expect);
    free(got);
    asyncrt_tile_destroy(op);
}

static void bad_launches_are_refused(void **state)
{
    (void)state;
    asyncrt_tile_desc d = {.size = sizeof d, .kind = ASYNCRT_TILE_TRANSPOSE, .dtype = ASYNCRT_F32};
    asyncrt_tile_op *op = NULL;
    assert_ok(g_ctx, asyncrt_tile_create(g_ctx, &d, &op));
    asyncrt_deviceptr a;
    assert_ok(g_ctx, asyncrt_memory_alloc(g_ctx, 4096, &a));
    assert_status(g_ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_tile_launch(op, 4, 4, 0, a, NULL));
    assert_status(g_ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_tile_launch(op, 4, 4, a + 2, a + 1024, NULL));
    assert_status(g_ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_tile_launch(op, (size_t)1 << 31, 1, a, a, NULL));
    assert_ok(g_ctx, asyncrt_tile_launch(op, 0, 5, a, a + 1024, NULL));
    assert_ok(g_ctx, asyncrt_memory_free(g_ctx, a));
    asyncrt_tile_destroy(op);
}

int main(void)
{
    const char *name = TILE_TEST_VARIANTS ? "test_tile_variants_gpu" : "test_tile_gpu";
    g_ctx = test_open_device_or_skip(name);
    if (!g_ctx) return ASYNCRT_TEST_SKIP;
    test_seed_random(name);
    /* e.g. ASYNCRT_TEST_FILTER=tma_path: one path under a slow sanitizer */
    const char *filter = getenv("ASYNCRT_TEST_FILTER");
    if (filter && *filter) cmocka_set_test_filter(filter);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bad_launches_are_refused),
        cmocka_unit_test(repeated_and_in_place_launches),
        cmocka_unit_test(plain_path),
        cmocka_unit_test(ldgsts_path),
        cmocka_unit_test(ldgsts_path_through_compute_80),
        cmocka_unit_test(tma_path),
    };
    const struct CMUnitTest variants[] = {
        cmocka_unit_test(tuned_variants),
        cmocka_unit_test(tuned_variants_through_compute_80),
    };
    int failed = TILE_TEST_VARIANTS ? cmocka_run_group_tests(variants, NULL, NULL)
                                    : cmocka_run_group_tests(tests, NULL, NULL);
    asyncrt_context_destroy(g_ctx);
    return failed;
}
