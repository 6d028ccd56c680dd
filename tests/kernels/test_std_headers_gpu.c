/* A kernel written as for nvcc with <cmath> and <cstdint> (std_headers.cu),
 * run on a device against a CPU reference, special values included; and
 * std_misc, whose one result is worked out by hand. Skipped without a GPU. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"

static asyncrt_context *g_ctx;
static asyncrt_module *g_module;

/* std_math's formula, in C (keep in step with std_headers.cu). */
static float reference(float x, uint32_t *flags)
{
    float s = sinf(x), c = cosf(x);
    float sq = powf(x, 2.0f);
    sq = sq < 0.0f ? 0.0f : sq;
    sq = sq > FLT_MAX ? FLT_MAX : sq;
    float y = s * s + c * c + sqrtf(fabsf(x)) + (float)(int32_t)floorf(x) + (float)3.14159265358979323846 + expf(-fabsf(x)) +
              atan2f(x, 2.0f) + fminf(x, 1.0f) + sq / 100.0f;
    uint32_t cls = isnan(x) ? 0 : isinf(x) ? 1 : x == 0.0f ? 2 : fabsf(x) < FLT_MIN ? 3 : 4;
    *flags = cls | (cls == 4 ? 8u : 0u) | (signbit(x) ? 16u : 0u) | (isinf(x * 1e38f) ? 32u : 0u) |
             (!isnan(x) && x > 0.0f ? 64u : 0u);
    return isfinite(y) ? y : NAN;
}

static void std_math_matches_the_cpu(void **state)
{
    (void)state;
    enum { n = 100000 };
    float *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    uint32_t *flags = malloc(n * sizeof *flags);
    const float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-40f, -1e-40f, FLT_MIN, 1e4f, -3.5f, 5.0f};
    size_t n_special = sizeof special / sizeof special[0];
    for (size_t i = 0; i < n; i++)
        in[i] = i < n_special ? special[i] : test_random_float(-10.f, 10.f);
    asyncrt_deviceptr d_in, d_out, d_flags;
    assert_ok(g_ctx, asyncrt_memory_alloc(g_ctx, n * sizeof(float), &d_in));
    assert_ok(g_ctx, asyncrt_memory_alloc(g_ctx, n * sizeof(float), &d_out));
    assert_ok(g_ctx, asyncrt_memory_alloc(g_ctx, n * sizeof(uint32_t), &d_flags));
    assert_ok(g_ctx, asyncrt_memory_to_device(g_ctx, d_in, in, n * sizeof(float)));
    assert_ok(g_ctx, asyncrt_memory_fill(g_ctx, d_out, 0xAB, n * sizeof(float), NULL));
    assert_ok(g_ctx, asyncrt_memory_fill(g_ctx, d_flags, 0xAB, n * sizeof(uint32_t), NULL));
    asyncrt_kernel *k;
    assert_ok(g_ctx, asyncrt_module_get_kernel(g_module, "std_math", &k));
    int count = n;
    void *args[] = {&d_in, &d_out, &d_flags, &count};
    size_t sizes[] = {8, 8, 8, 4};
    asyncrt_launch_config cfg = {.size = sizeof cfg, .grid = {(n + 255) / 256}, .block = {256}};
    assert_ok(g_ctx, asyncrt_kernel_launch(k, &cfg, args, sizes, 4));
    assert_ok(g_ctx, asyncrt_synchronize(g_ctx));
    assert_ok(g_ctx, asyncrt_memory_to_host(g_ctx, out, d_out, n * sizeof(float)));
    assert_ok(g_ctx, asyncrt_memory_to_host(g_ctx, flags, d_flags, n * sizeof(uint32_t)));
    for (size_t i = 0; i < n; i++) {
        uint32_t want_flags;
        float want = reference(in[i], &want_flags);
        bool same = isnan(want) ? isnan(out[i]) : fabsf(out[i] - want) <= 2e-5f * fabsf(want) + 2e-5f;
        if (!same) fail_msg("std_math(%a): %.9g, expected %.9g", in[i], out[i], want);
        if (flags[i] != want_flags) fail_msg("std_math(%a): flags 0x%x, expected 0x%x", in[i], flags[i], want_flags);
    }
    asyncrt_memory_free(g_ctx, d_in);
    asyncrt_memory_free(g_ctx, d_out);
    asyncrt_memory_free(g_ctx, d_flags);
    free(in), free(out), free(flags);
}

/* std_misc on "hello": reverse {4,1,3,2} -> {2,3,1,4}; max_element -> a[3];
 * swap a[0], a[1] -> {3,2,1,4}; memset a[0] = 0 -> {0,2,1,4}. The sum:
 * *m 4 + distance 2 + size 4 + (q == p) 1 + u + v 11 + *r 4 + strlen 5 +
 * memcmp 0 + abs 3 + count of 0 1 + apply 6 + found 3? 0 + offsetof 4 +
 * int16 max 32767 = 32812. */
static void std_misc_runs(void **state)
{
    (void)state;
    asyncrt_deviceptr d_out, d_text;
    assert_ok(g_ctx, asyncrt_memory_alloc(g_ctx, sizeof(int), &d_out));
    assert_ok(g_ctx, asyncrt_memory_alloc(g_ctx, 6, &d_text));
    assert_ok(g_ctx, asyncrt_memory_to_device(g_ctx, d_text, "hello", 6));
    assert_ok(g_ctx, asyncrt_memory_fill(g_ctx, d_out, 0xAB, sizeof(int), NULL));
    asyncrt_kernel *k;
    assert_ok(g_ctx, asyncrt_module_get_kernel(g_module, "std_misc", &k));
    void *args[] = {&d_out, &d_text};
    asyncrt_launch_config cfg = {.size = sizeof cfg, .grid = {1}, .block = {1}};
    assert_ok(g_ctx, asyncrt_kernel_launch(k, &cfg, args, NULL, 2));
    assert_ok(g_ctx, asyncrt_synchronize(g_ctx));
    int got = 0;
    assert_ok(g_ctx, asyncrt_memory_to_host(g_ctx, &got, d_out, sizeof got));
    assert_int_equal(got, 32812);
    asyncrt_memory_free(g_ctx, d_out);
    asyncrt_memory_free(g_ctx, d_text);
}

int main(void)
{
    g_ctx = test_open_device_or_skip("test_std_headers_gpu");
    if (!g_ctx) return ASYNCRT_TEST_SKIP;
    test_seed_random("test_std_headers_gpu");
    char *src = test_read_source_file("tests/kernels/std_headers.cu");
    if (!src || asyncrt_module_build(g_ctx, "std_headers.cu", src, NULL, &g_module) != ASYNCRT_SUCCESS) {
        fprintf(stderr, "build failed: %s\n", asyncrt_context_last_error(g_ctx));
        return 1;
    }
    free(src);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(std_math_matches_the_cpu),
        cmocka_unit_test(std_misc_runs),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    asyncrt_module_destroy(g_module);
    asyncrt_context_destroy(g_ctx);
    return failed;
}
