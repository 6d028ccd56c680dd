/* The map op on the GPU: every path the device has x every dtype, at lengths
 * around the tile and base pointers off by 4 and 8 bytes, against a CPU
 * reference on fresh random data, with the outputs and the bytes around
 * them poisoned first. The LDGSTS path also runs from compute_80 PTX. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"

static asyncrt_context *g_ctx;

/* ---- one case ----------------------------------------------------------- */

/* y = a * x + z * b for every dtype, with scalars of the matching type
 * (f32 for the 16-bit floats). */
static asyncrt_dtype scalar_type(asyncrt_dtype t)
{
    return t == ASYNCRT_F16 || t == ASYNCRT_BF16 ? ASYNCRT_F32 : t;
}

static void random_element(asyncrt_dtype t, void *out)
{
    float f = test_random_float(-4, 4);
    switch (t) {
    case ASYNCRT_F32: memcpy(out, &f, 4); break;
    case ASYNCRT_F64: {
        double d = (double)f + (double)test_random_float(0, 1) * 1e-7;
        memcpy(out, &d, 8);
        break;
    }
    case ASYNCRT_I32: {
        int32_t i = (int32_t)(test_random_u32() % 2001) - 1000;
        memcpy(out, &i, 4);
        break;
    }
    case ASYNCRT_U32: {
        uint32_t u = test_random_u32();
        memcpy(out, &u, 4);
        break;
    }
    case ASYNCRT_F16: {
        uint16_t h = test_float_to_f16(f);
        memcpy(out, &h, 2);
        break;
    }
    default: {
        uint16_t h = test_float_to_bf16(f);
        memcpy(out, &h, 2);
        break;
    }
    }
}

/* Checks element i of the output against the reference. */
static void check_axpby(asyncrt_dtype t, const void *sa, const void *sb, const void *x, const void *z,
                        const void *y, size_t i, const char *what)
{
    size_t s = asyncrt_dtype_size(t);
    const unsigned char *xi = (const unsigned char *)x + i * s, *zi = (const unsigned char *)z + i * s;
    const unsigned char *yi = (const unsigned char *)y + i * s;
    if (t == ASYNCRT_I32 || t == ASYNCRT_U32) {
        uint32_t a, b, xv, zv, got;
        memcpy(&a, sa, 4), memcpy(&b, sb, 4), memcpy(&xv, xi, 4), memcpy(&zv, zi, 4), memcpy(&got, yi, 4);
        uint32_t want = a * xv + zv * b; /* wraps like the GPU's; i32 data stays far from overflow */
        if (got != want) fail_msg("%s: element %zu is %u, expected %u", what, i, got, want);
        return;
    }
    double a, b, xv, zv, got, rel;
    if (t == ASYNCRT_F64) {
        memcpy(&a, sa, 8), memcpy(&b, sb, 8), memcpy(&xv, xi, 8), memcpy(&zv, zi, 8), memcpy(&got, yi, 8);
        rel = 1e-15;
    } else {
        float fa, fb;
        memcpy(&fa, sa, 4), memcpy(&fb, sb, 4);
        a = fa, b = fb;
        if (t == ASYNCRT_F32) {
            float fx, fz, fy;
            memcpy(&fx, xi, 4), memcpy(&fz, zi, 4), memcpy(&fy, yi, 4);
            xv = fx, zv = fz, got = fy;
            rel = 1e-6;
        } else {
            uint16_t hx, hz, hy;
            memcpy(&hx, xi, 2), memcpy(&hz, zi, 2), memcpy(&hy, yi, 2);
            bool h = t == ASYNCRT_F16;
            xv = h ? test_f16_to_float(hx) : test_bf16_to_float(hx);
            zv = h ? test_f16_to_float(hz) : test_bf16_to_float(hz);
            got = h ? test_f16_to_float(hy) : test_bf16_to_float(hy);
            rel = h ? 1.0 / 1024 : 1.0 / 128; /* one unit in the last place */
        }
    }
    double want = a * xv + zv * b;
    /* f16 results may be subnormal, where the unit in the last place is 2^-24. */
    double tol = rel * (fabs(a * xv) + fabs(zv * b)) + (t == ASYNCRT_F16 ? ldexp(1, -24) : 1e-300);
    if (!(fabs(got - want) <= tol))
        fail_msg("%s: element %zu is %.9g, expected %.9g (x %.9g, z %.9g)", what, i, got, want, xv, zv);
}

typedef struct run_case {
    asyncrt_map *map;
    asyncrt_dtype dtype;
    size_t n;
    size_t offset[3];  /* bytes past a 256-byte aligned base: x, z, y */
    bool in_place;     /* y is x */
} run_case;

#define GUARD 64 /* poisoned bytes after each output that must stay so */

static void run(const run_case *c, const char *what)
{
    asyncrt_context *ctx = g_ctx;
    size_t s = asyncrt_dtype_size(c->dtype), bytes = c->n * s;
    size_t span[3];
    asyncrt_deviceptr base[3] = {0, 0, 0};
    unsigned char *host[3], *back = malloc(bytes + GUARD + 256);
    assert_non_null(back);
    for (int k = 0; k < 3; k++) {
        span[k] = c->offset[k] + bytes + GUARD;
        host[k] = malloc(bytes + 1);
        assert_non_null(host[k]);
        for (size_t i = 0; i < c->n; i++) random_element(c->dtype, host[k] + i * s);
        if (k == 2 && c->in_place) continue;
        assert_ok(ctx, asyncrt_memory_alloc(ctx, span[k], &base[k]));
    }
    if (c->in_place) memcpy(host[2], host[0], bytes); /* the output starts as x */
    asyncrt_deviceptr x = base[0] + c->offset[0], z = base[1] + c->offset[1];
    asyncrt_deviceptr y = c->in_place ? x : base[2] + c->offset[2];
    if (!c->in_place) assert_ok(ctx, asyncrt_memory_fill(ctx, base[2], 0xFF, span[2], NULL));
    assert_ok(ctx, asyncrt_memory_fill(ctx, base[0], 0xFF, span[0], NULL));
    if (bytes) {
        assert_ok(ctx, asyncrt_memory_to_device(ctx, x, host[0], bytes));
        assert_ok(ctx, asyncrt_memory_to_device(ctx, z, host[1], bytes));
    }

    unsigned char sa[8], sb[8];
    asyncrt_dtype st = scalar_type(c->dtype);
    random_element(st, sa);
    random_element(st, sb);
    if (st == ASYNCRT_I32) { /* keep a*x + z*b well inside int32 */
        int32_t v = (int32_t)(test_random_u32() % 201) - 100;
        memcpy(sa, &v, 4);
    }
    const void *scalars[] = {sa, sb};
    asyncrt_deviceptr ins[] = {x, z};
    assert_ok(ctx, asyncrt_map_launch(c->map, c->n, ins, &y, scalars, NULL));
    assert_ok(ctx, asyncrt_synchronize(ctx));

    /* The output and the guard after it; in place, the guard is x's. */
    size_t yoff = c->in_place ? c->offset[0] : c->offset[2];
    asyncrt_deviceptr ybase = c->in_place ? base[0] : base[2];
    assert_ok(ctx, asyncrt_memory_to_host(ctx, back, ybase, yoff + bytes + GUARD));
    for (size_t i = 0; i < yoff; i++)
        if (back[i] != 0xFF) fail_msg("%s: byte %zu before the output was written", what, yoff - i);
    for (size_t i = 0; i < GUARD; i++)
        if (back[yoff + bytes + i] != 0xFF) fail_msg("%s: byte %zu after the output was written", what, i);
    for (size_t i = 0; i < c->n; i++)
        check_axpby(c->dtype, sa, sb, c->in_place ? host[2] : host[0], host[1], back + yoff, i, what);

    for (int k = 0; k < 3; k++) {
        assert_ok(ctx, asyncrt_memory_free(ctx, base[k]));
        free(host[k]);
    }
    free(back);
}

static asyncrt_map *make(asyncrt_dtype t, asyncrt_op_path path, const char *arch)
{
    asyncrt_map_arg in[2] = {{"x", t}, {"z", t}}, out = {"y", t};
    asyncrt_map_arg sc[2] = {{"a", scalar_type(t)}, {"b", scalar_type(t)}};
    asyncrt_map_desc d = {.size = sizeof d,
                          .inputs = in, .input_count = 2, .outputs = &out, .output_count = 1,
                          .scalars = sc, .scalar_count = 2, .expression = "y = a * x + z * b;",
                          .path = path, .arch = arch};
    asyncrt_map *m = NULL;
    assert_ok(g_ctx, asyncrt_map_create(g_ctx, &d, &m));
    assert_int_equal(asyncrt_map_path_of(m), path);
    return m;
}

static void every_length_and_offset(asyncrt_op_path path, const char *arch)
{
    const asyncrt_device_info *dev = asyncrt_context_device(g_ctx);
    int cc = dev->cc_major * 10 + dev->cc_minor;
    if ((path == ASYNCRT_PATH_TMA && cc < 90) || (path == ASYNCRT_PATH_LDGSTS && cc < 80)) {
        print_message("%s path: the device is sm_%d, skipped\n", asyncrt_op_path_name(path), cc);
        return;
    }
    for (asyncrt_dtype t = 0; t < ASYNCRT_DTYPE_COUNT; t++) {
        asyncrt_map *m = make(t, path, arch);
        size_t tile = asyncrt_map_tile_elements(m);
        size_t lengths[] = {0, 1, 3, tile, tile + 1, 2 * tile - 1, (size_t)dev->sm_count * 5 * tile + 12345};
        size_t offsets[] = {0, 4, 8};
        for (size_t li = 0; li < sizeof lengths / sizeof lengths[0]; li++)
            for (size_t oi = 0; oi < 3; oi++) {
                if (offsets[oi] % asyncrt_dtype_size(t)) continue;
                run_case c = {m, t, lengths[li], {offsets[oi], offsets[oi], offsets[oi]}, false};
                char what[160];
                snprintf(what, sizeof what, "%s path (%s), %s, n %zu, offset %zu", asyncrt_op_path_name(path),
                         arch ? arch : "auto", asyncrt_dtype_name(t), lengths[li], offsets[oi]);
                run(&c, what);
            }
        /* Arrays that no element aligns together, and in place. */
        size_t n = 3 * tile + 7, s = asyncrt_dtype_size(t);
        run_case mixed = {m, t, n, {0, s, 2 * s}, false};
        if (s < 8) run(&mixed, "offsets 0, 1 and 2 elements");
        run_case in_place = {m, t, n, {s, s, s}, true};
        run(&in_place, "in place");
        asyncrt_map_destroy(m);
    }
}

static void tma_path(void **state) { (void)state; every_length_and_offset(ASYNCRT_PATH_TMA, NULL); }
static void ldgsts_path(void **state) { (void)state; every_length_and_offset(ASYNCRT_PATH_LDGSTS, NULL); }
static void plain_path(void **state) { (void)state; every_length_and_offset(ASYNCRT_PATH_PLAIN, NULL); }
/* The sm_80 code on a newer device, JIT-compiled by the driver from PTX
 * (skipped, with the rule's sentence, where NVRTC is newer than the driver). */
static void ldgsts_path_from_compute_80(void **state)
{
    (void)state;
    test_skip_unless_loadable(g_ctx, "compute_80");
    every_length_and_offset(ASYNCRT_PATH_LDGSTS, "compute_80");
}

/* Mixed dtypes and two outputs: f = h * a + d, i = (int)(d * b). */
static void mixed_dtypes_two_outputs(void **state)
{
    (void)state;
    asyncrt_context *ctx = g_ctx;
    asyncrt_map_arg in[2] = {{"h", ASYNCRT_F16}, {"d", ASYNCRT_F64}};
    asyncrt_map_arg out[2] = {{"f", ASYNCRT_F32}, {"i", ASYNCRT_I32}};
    asyncrt_map_arg sc[2] = {{"a", ASYNCRT_F32}, {"b", ASYNCRT_F64}};
    for (asyncrt_op_path path = ASYNCRT_PATH_AUTO; path <= ASYNCRT_PATH_PLAIN; path++) {
        asyncrt_map_desc desc = {.size = sizeof desc,
                                 .inputs = in, .input_count = 2, .outputs = out, .output_count = 2,
                                 .scalars = sc, .scalar_count = 2,
                                 .expression = "f = h * a + (float)d;\ni = (int)(d * b);", .path = path};
        asyncrt_map *m = NULL;
        asyncrt_status s = asyncrt_map_create(ctx, &desc, &m);
        if (s == ASYNCRT_ERROR_UNSUPPORTED) continue;
        assert_ok(ctx, s);
        size_t n = 2 * asyncrt_map_tile_elements(m) + 5;
        uint16_t *h = malloc(n * 2);
        double *d = malloc(n * 8);
        float *f = malloc(n * 4);
        int32_t *iv = malloc(n * 4);
        assert_true(h && d && f && iv);
        for (size_t k = 0; k < n; k++) {
            h[k] = test_float_to_f16(test_random_float(-4, 4));
            d[k] = test_random_float(-1000, 1000);
        }
        float a = test_random_float(-2, 2);
        double b = test_random_float(-3, 3);
        asyncrt_deviceptr bh, bd, bf, bi;
        assert_ok(ctx, asyncrt_memory_alloc(ctx, n * 2 + 64, &bh));
        assert_ok(ctx, asyncrt_memory_alloc(ctx, n * 8 + 64, &bd));
        assert_ok(ctx, asyncrt_memory_alloc(ctx, n * 4 + 64, &bf));
        assert_ok(ctx, asyncrt_memory_alloc(ctx, n * 4 + 64, &bi));
        /* Byte offsets of h, d, f, i: the first layout aligns all four at
         * element 7, the second at no element (all element by element). */
        static const size_t layouts[2][4] = {{2, 8, 4, 4}, {4, 8, 8, 8}};
        for (int l = 0; l < 2; l++) {
            const size_t *o = layouts[l];
            assert_ok(ctx, asyncrt_memory_fill(ctx, bf, 0xFF, n * 4 + 64, NULL));
            assert_ok(ctx, asyncrt_memory_fill(ctx, bi, 0xFF, n * 4 + 64, NULL));
            assert_ok(ctx, asyncrt_memory_to_device(ctx, bh + o[0], h, n * 2));
            assert_ok(ctx, asyncrt_memory_to_device(ctx, bd + o[1], d, n * 8));
            asyncrt_deviceptr ins[] = {bh + o[0], bd + o[1]}, outs[] = {bf + o[2], bi + o[3]};
            const void *scalars[] = {&a, &b};
            assert_ok(ctx, asyncrt_map_launch(m, n, ins, outs, scalars, NULL));
            assert_ok(ctx, asyncrt_synchronize(ctx));
            assert_ok(ctx, asyncrt_memory_to_host(ctx, f, bf + o[2], n * 4));
            assert_ok(ctx, asyncrt_memory_to_host(ctx, iv, bi + o[3], n * 4));
            for (size_t k = 0; k < n; k++) {
                float hf = test_f16_to_float(h[k]);
                float want = hf * a + (float)d[k];
                if (!(fabsf(f[k] - want) <= 1e-6f * (fabsf(hf * a) + fabsf((float)d[k])) + 1e-30f))
                    fail_msg("%s path, layout %d: f[%zu] = %.9g, expected %.9g",
                             asyncrt_op_path_name(asyncrt_map_path_of(m)), l, k, f[k], want);
                if (iv[k] != (int32_t)(d[k] * b))
                    fail_msg("%s path, layout %d: i[%zu] = %d, expected %d",
                             asyncrt_op_path_name(asyncrt_map_path_of(m)), l, k, iv[k], (int32_t)(d[k] * b));
            }
        }
        assert_ok(ctx, asyncrt_memory_free(ctx, bh));
        assert_ok(ctx, asyncrt_memory_free(ctx, bd));
        assert_ok(ctx, asyncrt_memory_free(ctx, bf));
        assert_ok(ctx, asyncrt_memory_free(ctx, bi));
        free(h), free(d), free(f), free(iv);
        asyncrt_map_destroy(m);
    }
}

static void misaligned_pointer_is_refused(void **state)
{
    (void)state;
    asyncrt_map *m = make(ASYNCRT_F32, ASYNCRT_PATH_PLAIN, NULL);
    asyncrt_deviceptr p;
    assert_ok(g_ctx, asyncrt_memory_alloc(g_ctx, 1024, &p));
    asyncrt_deviceptr ins[] = {p + 2, p}, out = p + 512;
    float a = 1, b = 1;
    const void *scalars[] = {&a, &b};
    assert_status(g_ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_map_launch(m, 16, ins, &out, scalars, NULL));
    assert_non_null(strstr(asyncrt_context_last_error(g_ctx), "input 0"));
    assert_ok(g_ctx, asyncrt_memory_free(g_ctx, p));
    asyncrt_map_destroy(m);
}

int main(void)
{
    unsetenv("ASYNCRT_PATH");
    if (!(g_ctx = test_open_device_or_skip("test_map_gpu"))) return ASYNCRT_TEST_SKIP;
    test_seed_random("test_map_gpu");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tma_path),
        cmocka_unit_test(ldgsts_path),
        cmocka_unit_test(plain_path),
        cmocka_unit_test(ldgsts_path_from_compute_80),
        cmocka_unit_test(mixed_dtypes_two_outputs),
        cmocka_unit_test(misaligned_pointer_is_refused),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    asyncrt_context_destroy(g_ctx);
    return failed;
}
