/* Many GPUs in one process, on a machine with two or more (skipped, with a
 * message, on fewer): a kernel compiled once runs on every device with the
 * right results (fresh random data, outputs poisoned, a CPU reference), the
 * cache's counters say one compile and a load per device (one image load
 * where the driver has cuLibraryLoadData); the tile op's tensor maps are
 * encoded per device; an op made for device 0 refuses device 1's stream and
 * works when made on device 1. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asyncrt/ops.h"
#include "asyncrt/tile_ops.h"
#include "test_support.h"

#define N 100003 /* not a multiple of any block */

typedef struct fixture {
    asyncrt_context *ctx[8];
    int count;
} fixture;

static fixture g;

#define assert_says(ctx, words)                                                  \
    do {                                                                         \
        if (!strstr(asyncrt_context_last_error(ctx), (words)))                   \
            fail_msg("message '%s' lacks '%s'", asyncrt_context_last_error(ctx), (words)); \
    } while (0)

static const char *k_source =
    "extern \"C\" __global__ void axpb(const float *x, float *y, float a, float b, int n) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) y[i] = a * x[i] + b;\n"
    "}\n";

/* Runs axpb on device d's context from program p, checked against the CPU. */
/* Loads p on ctx's device, runs and checks it; the module stays loaded (returned), as a program
 * used on every device keeps one per device: they share one library. */
static asyncrt_module *run_and_check(asyncrt_context *ctx, const asyncrt_program *p, int d)
{
    asyncrt_module *m = NULL;
    asyncrt_kernel *k = NULL;
    assert_ok(ctx, asyncrt_module_load(ctx, p, &m));
    assert_ok(ctx, asyncrt_module_get_kernel(m, "axpb", &k));
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    assert_non_null(x);
    assert_non_null(y);
    for (int i = 0; i < N; i++) x[i] = test_random_float(-4, 4);
    float a = test_random_float(0.5f, 2), b = test_random_float(-1, 1);
    asyncrt_deviceptr dx, dy;
    assert_ok(ctx, asyncrt_memory_alloc(ctx, N * sizeof *x, &dx));
    assert_ok(ctx, asyncrt_memory_alloc(ctx, N * sizeof *y, &dy));
    assert_ok(ctx, asyncrt_memory_to_device(ctx, dx, x, N * sizeof *x));
    assert_ok(ctx, asyncrt_memory_fill(ctx, dy, 0xff, N * sizeof *y, NULL)); /* NaN: an element not written shows */
    int n = N;
    void *args[] = {&dx, &dy, &a, &b, &n};
    const size_t sizes[] = {sizeof dx, sizeof dy, sizeof a, sizeof b, sizeof n};
    asyncrt_launch_config cfg = ASYNCRT_LAUNCH_CONFIG_INIT;
    cfg.grid[0] = (N + 255) / 256;
    cfg.block[0] = 256;
    assert_ok(ctx, asyncrt_kernel_launch(k, &cfg, args, sizes, 5));
    assert_ok(ctx, asyncrt_synchronize(ctx));
    assert_ok(ctx, asyncrt_memory_to_host(ctx, y, dy, N * sizeof *y));
    for (int i = 0; i < N; i++)
        if (!(fabsf(y[i] - (a * x[i] + b)) <= 1e-5f * (1 + fabsf(a * x[i] + b))))
            fail_msg("device %d: y[%d] = %g, expected %g", d, i, y[i], a * x[i] + b);
    asyncrt_memory_free(ctx, dx);
    asyncrt_memory_free(ctx, dy);
    free(x);
    free(y);
    return m;
}

static void compiled_once_runs_everywhere(void **state)
{
    (void)state;
    asyncrt_cache_stats before = ASYNCRT_CACHE_STATS_INIT, first = ASYNCRT_CACHE_STATS_INIT,
                        after = ASYNCRT_CACHE_STATS_INIT;
    assert_ok(g.ctx[0], asyncrt_context_cache_stats(g.ctx[0], &before));
    char source[512];
    snprintf(source, sizeof source, "%s// %u\n", k_source, test_random_u32()); /* a fresh key: a real miss */
    asyncrt_program *p0 = NULL;
    assert_ok(g.ctx[0], asyncrt_program_compile(g.ctx[0], "axpb.cu", source, NULL, &p0));
    assert_ok(g.ctx[0], asyncrt_context_cache_stats(g.ctx[0], &first));
    int archs = 1;
    asyncrt_module *loaded[16] = {0};
    for (int d = 0; d < g.count && d < 16; d++) {
        asyncrt_program *p = NULL;
        assert_ok(g.ctx[d], asyncrt_program_compile(g.ctx[d], "axpb.cu", source, NULL, &p));
        if (strcmp(asyncrt_program_arch(p), asyncrt_program_arch(p0)) != 0) archs++; /* a mixed machine */
        loaded[d] = run_and_check(g.ctx[d], p, d);
        asyncrt_program_destroy(p);
    }
    assert_ok(g.ctx[g.count - 1], asyncrt_context_cache_stats(g.ctx[g.count - 1], &after));
    void *library = NULL;
    bool libraries = asyncrt_context_driver_proc(g.ctx[0], "cuLibraryLoadData", 12000, &library) == ASYNCRT_SUCCESS;
    printf("compiled_once_runs_everywhere: %d devices, %d arch(es): %llu NVRTC compile(s), %llu module loads, "
           "%llu image loads (cuLibraryLoadData %s)\n", g.count, archs,
           (unsigned long long)(after.stores - before.stores),
           (unsigned long long)(after.module_loads - before.module_loads),
           (unsigned long long)(after.image_loads - before.image_loads), libraries ? "present" : "absent");
    assert_int_equal(first.stores - before.stores, 1);
    if (archs == 1) {
        assert_int_equal(after.stores - before.stores, 1);  /* one compile */
        assert_int_equal(after.misses, first.misses);       /* the others were memory hits */
        assert_int_equal(after.module_loads - before.module_loads, g.count);
        assert_int_equal(after.image_loads - before.image_loads, libraries ? 1 : g.count);
    }
    for (int d = 0; d < g.count && d < 16; d++) asyncrt_module_destroy(loaded[d]);
    asyncrt_program_destroy(p0);
}

/* The tile op's TMA path encodes its tensor maps on its own device. */
static void tensor_maps_per_device(void **state)
{
    (void)state;
    const size_t rows = 516, cols = 340; /* ragged edges (not multiples of the tile); rows of the input and
                                           * of the transpose a multiple of 16 bytes, as TMA needs */
    for (int d = 0; d < g.count; d++) {
        asyncrt_context *ctx = g.ctx[d];
        if (!asyncrt_context_device(ctx)->features.tma) {
            printf("tensor_maps_per_device: device %d has no TMA; skipped there\n", d);
            continue;
        }
        asyncrt_tile_desc desc = ASYNCRT_TILE_DESC_INIT;
        desc.kind = ASYNCRT_TILE_TRANSPOSE;
        desc.dtype = ASYNCRT_F32;
        desc.expression = "out = 2 * v + 1;";
        desc.path = ASYNCRT_PATH_TMA;
        asyncrt_tile_op *op = NULL;
        assert_ok(ctx, asyncrt_tile_create(ctx, &desc, &op));
        float *in = malloc(rows * cols * sizeof *in), *out = malloc(rows * cols * sizeof *out);
        for (size_t i = 0; i < rows * cols; i++) in[i] = test_random_float(-8, 8);
        asyncrt_deviceptr din, dout;
        assert_ok(ctx, asyncrt_memory_alloc(ctx, rows * cols * sizeof *in, &din));
        assert_ok(ctx, asyncrt_memory_alloc(ctx, rows * cols * sizeof *out, &dout));
        assert_ok(ctx, asyncrt_memory_to_device(ctx, din, in, rows * cols * sizeof *in));
        assert_ok(ctx, asyncrt_memory_fill(ctx, dout, 0xff, rows * cols * sizeof *out, NULL));
        assert_int_equal(asyncrt_tile_launch_path(op, rows, cols, din, dout), ASYNCRT_PATH_TMA);
        assert_ok(ctx, asyncrt_tile_launch(op, rows, cols, din, dout, NULL));
        assert_ok(ctx, asyncrt_synchronize(ctx));
        assert_ok(ctx, asyncrt_memory_to_host(ctx, out, dout, rows * cols * sizeof *out));
        for (size_t y = 0; y < rows; y++)
            for (size_t x = 0; x < cols; x++)
                if (out[x * rows + y] != 2 * in[y * cols + x] + 1)
                    fail_msg("device %d: out[%zu][%zu] = %g, expected %g", d, x, y, out[x * rows + y],
                             2 * in[y * cols + x] + 1);
        asyncrt_memory_free(ctx, din);
        asyncrt_memory_free(ctx, dout);
        free(in);
        free(out);
        asyncrt_tile_destroy(op);
    }
}

static void op_for_device_0_refuses_device_1(void **state)
{
    (void)state;
    asyncrt_map_arg x = {"x", ASYNCRT_F32}, y = {"y", ASYNCRT_F32};
    asyncrt_map_desc desc = ASYNCRT_MAP_DESC_INIT;
    desc.inputs = &x, desc.input_count = 1, desc.outputs = &y, desc.output_count = 1;
    desc.expression = "y = 3 * x;";
    asyncrt_map *on0 = NULL, *on1 = NULL;
    assert_ok(g.ctx[0], asyncrt_map_create(g.ctx[0], &desc, &on0));
    assert_ok(g.ctx[1], asyncrt_map_create(g.ctx[1], &desc, &on1));
    asyncrt_stream s1;
    assert_ok(g.ctx[1], asyncrt_stream_create(g.ctx[1], &s1));
    const size_t n = 4099;
    float host[4099];
    for (size_t i = 0; i < n; i++) host[i] = test_random_float(-1, 1);
    asyncrt_deviceptr in, out;
    assert_ok(g.ctx[1], asyncrt_memory_alloc(g.ctx[1], n * 4, &in));
    assert_ok(g.ctx[1], asyncrt_memory_alloc(g.ctx[1], n * 4, &out));
    assert_ok(g.ctx[1], asyncrt_memory_to_device(g.ctx[1], in, host, n * 4));
    assert_ok(g.ctx[1], asyncrt_memory_fill(g.ctx[1], out, 0xff, n * 4, NULL));
    assert_status(g.ctx[0], ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_map_launch(on0, n, &in, &out, NULL, s1));
    assert_says(g.ctx[0], "made for device 0");
    assert_says(g.ctx[0], "device 1's");
    assert_ok(g.ctx[1], asyncrt_map_launch(on1, n, &in, &out, NULL, s1));
    assert_ok(g.ctx[1], asyncrt_stream_synchronize(g.ctx[1], s1));
    float got[4099];
    assert_ok(g.ctx[1], asyncrt_memory_to_host(g.ctx[1], got, out, n * 4));
    for (size_t i = 0; i < n; i++)
        if (got[i] != 3 * host[i]) fail_msg("device 1: y[%zu] = %g, expected %g", i, got[i], 3 * host[i]);
    asyncrt_memory_free(g.ctx[1], in);
    asyncrt_memory_free(g.ctx[1], out);
    asyncrt_stream_destroy(g.ctx[1], s1);
    asyncrt_map_destroy(on0);
    asyncrt_map_destroy(on1);
}

int main(void)
{
    g.ctx[0] = test_open_device_or_skip("test_multi_gpu");
    if (!g.ctx[0]) return ASYNCRT_TEST_SKIP;
    assert_int_equal(asyncrt_device_count(g.ctx[0], &g.count), ASYNCRT_SUCCESS);
    if (g.count < 2) {
        printf("test_multi_gpu: skipped, %d CUDA device(s): these tests need 2 or more\n", g.count);
        asyncrt_context_destroy(g.ctx[0]);
        return ASYNCRT_TEST_SKIP;
    }
    if (g.count > 8) g.count = 8;
    for (int d = 1; d < g.count; d++)
        if (asyncrt_context_create_peer(g.ctx[0], d, &g.ctx[d]) != ASYNCRT_SUCCESS) {
            fprintf(stderr, "test_multi_gpu: device %d: %s\n", d, asyncrt_context_last_error(g.ctx[0]));
            return 1;
        }
    test_seed_random("test_multi_gpu");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(compiled_once_runs_everywhere),
        cmocka_unit_test(tensor_maps_per_device),
        cmocka_unit_test(op_for_device_0_refuses_device_1),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    for (int d = g.count - 1; d >= 0; d--) asyncrt_context_destroy(g.ctx[d]);
    return rc;
}
