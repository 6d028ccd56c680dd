/* asyncrt-run on a GPU: each kernel of tests/run/kernels runs through the
 * tool on fresh random data with outputs poisoned, checked by --expect
 * against a CPU reference; a perturbed reference must then fail (exit 6),
 * so every check here is able to fail. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffers.h"
#include "npy.h"
#include "run_tool.h"
#include "test_support.h"

#define EXIT_MISMATCH 6

/* Writes want with element `bad` changed, then expects the tool to report it. */
static void assert_detects_mismatch(const char *args, const char *buffer, run_dtype t,
                                    const unsigned long long *shape, int rank, void *want, size_t count)
{
    size_t bad = test_random_u32() % count, size = run_dtype_size(t);
    long double v = run_value_load(t, (char *)want + bad * size);
    run_value_store(t, v + 1000, (char *)want + bad * size);
    write_npy_or_fail(tmp_path("wrong.npy"), t, shape, rank, want);
    assert_tool(EXIT_MISMATCH, "%s --expect %s=%s", args, buffer, tmp_path("wrong.npy"));
    assert_non_null(strstr(run_tool_output(), "1 of"));
    run_value_store(t, v, (char *)want + bad * size);
}

static void test_plain_saxpy(void **state)
{
    (void)state;
    enum { N = 1000 };
    float x[N], y[N], want[N], a = test_random_float(-4, 4);
    for (int i = 0; i < N; i++) {
        x[i] = test_random_float(-1, 1);
        y[i] = test_random_float(-1, 1);
        want[i] = a * x[i] + y[i];
    }
    unsigned long long shape[1] = {N};
    write_npy_or_fail(tmp_path("x.npy"), RUN_F32, shape, 1, x);
    write_npy_or_fail(tmp_path("y.npy"), RUN_F32, shape, 1, y);
    write_npy_or_fail(tmp_path("want.npy"), RUN_F32, shape, 1, want);
    char args[4096];
    snprintf(args, sizeof args,
             "%s --grid 4 --block 256 --buf x=npy:%s --buf y=f32:%d:npy=%s --arg f32:%.9g --arg buf:x --arg buf:y "
             "--arg i32:%d",
             kernel_path("saxpy.cu"), tmp_path("x.npy"), N, tmp_path("y.npy"), (double)a, N);
    assert_tool(0, "%s --expect y=%s --out y=%s", args, tmp_path("want.npy"), tmp_path("got.npy"));
    /* --out wrote what the kernel computed. */
    run_npy got;
    void *storage;
    char err[512];
    if (!run_npy_read(tmp_path("got.npy"), &got, &storage, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(got.count, N);
    for (int i = 0; i < N; i++) {
        float g;
        memcpy(&g, (const char *)got.data + 4 * i, 4);
        if (fabsf(g - want[i]) > 1e-5f * fabsf(want[i]) + 1e-6f) fail_msg("y[%d] = %g, want %g", i, g, want[i]);
    }
    free(storage);
    assert_detects_mismatch(args, "y", RUN_F32, shape, 1, want, N);
}

static void test_template_scale_with_generated_data(void **state)
{
    (void)state;
    enum { N = 777 };
    uint64_t seed = test_random_u32();
    double want[N];
    for (int i = 0; i < N; i++) want[i] = 3.0 * (double)(-1 + 2 * (long double)run_random_unit(seed, (uint64_t)i));
    unsigned long long shape[1] = {N};
    write_npy_or_fail(tmp_path("scaled.npy"), RUN_F64, shape, 1, want);
    char args[4096];
    snprintf(args, sizeof args,
             "%s --kernel 'scale<double>' --grid 2 --block 128 --buf d=f64:%d:rand=%llu --arg buf:d --arg f64:3 "
             "--arg i32:%d",
             kernel_path("scale.cu"), N, (unsigned long long)seed, N);
    assert_tool(0, "%s --expect d=%s --rtol 0 --atol 0", args, tmp_path("scaled.npy"));
    assert_detects_mismatch(args, "d", RUN_F64, shape, 1, want, N);
}

static void test_cp_async_pipeline(void **state)
{
    (void)state;
    enum { GRID = 4, BLOCK = 256, BATCHES = 8, N = GRID * BLOCK * BATCHES };
    static float in[N], want[N];
    for (int i = 0; i < N; i++) {
        in[i] = test_random_float(-100, 100);
        want[i] = 2.0f * in[i] + 1.0f;
    }
    unsigned long long shape[1] = {N};
    write_npy_or_fail(tmp_path("in.npy"), RUN_F32, shape, 1, in);
    write_npy_or_fail(tmp_path("want.npy"), RUN_F32, shape, 1, want);
    char args[4096];
    snprintf(args, sizeof args,
             "%s --grid %d --block %d --smem 3K --buf in=npy:%s --buf out=f32:%d:poison --arg buf:in --arg buf:out "
             "--arg i32:%d",
             kernel_path("pipeline.cu"), GRID, BLOCK, tmp_path("in.npy"), N, BATCHES);
    assert_tool(0, "%s --expect out=%s", args, tmp_path("want.npy"));
    assert_detects_mismatch(args, "out", RUN_F32, shape, 1, want, N);
}

static void test_tma_bulk_1d(void **state)
{
    (void)state;
    enum { BLOCKS = 16, LEN = 1024, N = BLOCKS * LEN };
    static int32_t data[N], want[N];
    for (int i = 0; i < N; i++) {
        data[i] = (int32_t)test_random_u32();
        if (data[i] == INT32_MAX) data[i] = 0;
        want[i] = data[i] + 1;
    }
    unsigned long long shape[1] = {N};
    write_npy_or_fail(tmp_path("data.npy"), RUN_I32, shape, 1, data);
    write_npy_or_fail(tmp_path("want.npy"), RUN_I32, shape, 1, want);
    char args[4096];
    snprintf(args, sizeof args, "%s --grid %d --block 128 --buf data=npy:%s --arg buf:data", kernel_path("tma_bulk_1d.cu"),
             BLOCKS, tmp_path("data.npy"));
    assert_tool(0, "%s --expect data=%s", args, tmp_path("want.npy"));
    assert_detects_mismatch(args, "data", RUN_I32, shape, 1, want, N);
}

static void test_tma_2d_tensor_maps(void **state)
{
    (void)state;
    enum { H = 130, W = 200 }; /* partial tiles on both edges of 32x16 boxes */
    static float in[H * W], want[H * W];
    for (int i = 0; i < H * W; i++) {
        in[i] = test_random_float(-10, 10);
        want[i] = 2.0f * in[i] + 1.0f;
    }
    unsigned long long shape[2] = {H, W};
    write_npy_or_fail(tmp_path("in2d.npy"), RUN_F32, shape, 2, in);
    write_npy_or_fail(tmp_path("want2d.npy"), RUN_F32, shape, 2, want);
    char args[4096];
    snprintf(args, sizeof args,
             "%s --grid 7,9 --block 128 --buf in=npy:%s --buf out=f32:%dx%d:poison "
             "--tmap tin=in:box=32,16:swizzle=128b --tmap tout=out:box=32,16:swizzle=128b --arg tmap:tin --arg tmap:tout",
             kernel_path("tma_2d.cu"), tmp_path("in2d.npy"), H, W);
    assert_tool(0, "%s --expect out=%s", args, tmp_path("want2d.npy"));
    assert_detects_mismatch(args, "out", RUN_F32, shape, 2, want, H * W);
    /* A box the driver would reject reaches the user as the named rule. */
    assert_tool(2, "%s --grid 7,9 --block 128 --buf in=npy:%s --buf out=f32:%dx%d --tmap tin=in:box=10,16 "
                   "--tmap tout=out:box=32,16 --arg tmap:tin --arg tmap:tout",
                kernel_path("tma_2d.cu"), tmp_path("in2d.npy"), H, W);
    assert_non_null(strstr(run_tool_output(), "box_dim[0]"));
}

static void test_warp_specialised_mbarrier(void **state)
{
    (void)state;
    enum { GRID = 8, TILES = 16, TILE = 1024, N = GRID * TILES * TILE };
    static float in[N], want[N];
    for (int i = 0; i < N; i++) {
        in[i] = test_random_float(-50, 50);
        want[i] = 0.5f * in[i] + 0.25f;
    }
    unsigned long long shape[1] = {N};
    write_npy_or_fail(tmp_path("ws_in.npy"), RUN_F32, shape, 1, in);
    write_npy_or_fail(tmp_path("ws_want.npy"), RUN_F32, shape, 1, want);
    char args[4096];
    snprintf(args, sizeof args,
             "%s --grid %d --block 160 --buf in=npy:%s --buf out=f32:%d:poison --arg buf:in --arg buf:out --arg i32:%d",
             kernel_path("ws_mbarrier.cu"), GRID, tmp_path("ws_in.npy"), N, TILES);
    assert_tool(0, "%s --expect out=%s", args, tmp_path("ws_want.npy"));
    assert_detects_mismatch(args, "out", RUN_F32, shape, 1, want, N);
}

static void test_signature_check_json_and_timing(void **state)
{
    (void)state;
    /* One argument short: the expected sizes are shown. */
    assert_tool(2, "%s --buf x=f32:4 --arg f32:1 --arg buf:x --arg buf:x", kernel_path("saxpy.cu"));
    assert_non_null(strstr(run_tool_output(), "sizes (4, 8, 8, 4)"));
    /* Wrong size: f64 where the kernel takes a float. */
    assert_tool(2, "%s --buf x=f32:4 --arg f64:1 --arg buf:x --arg buf:x --arg i32:4", kernel_path("saxpy.cu"));
    /* JSON, timing and derived bytes: 2 buffers of 4096 floats. */
    assert_tool(0, "%s --grid 16 --block 256 --buf x=f32:4096:rand=1 --buf y=f32:4096 --arg f32:2 --arg buf:x "
                   "--arg buf:y --arg i32:4096 --repeat 5 --json -v",
                kernel_path("saxpy.cu"));
    const char *out = run_tool_output();
    assert_non_null(strstr(out, "{\"status\":\"ok\""));
    assert_non_null(strstr(out, "\"param_sizes\":[4,8,8,4]"));
    assert_non_null(strstr(out, "\"timing\":{\"repeat\":5"));
    assert_non_null(strstr(out, "\"bytes\":32768"));
    assert_non_null(strstr(out, "target sm_"));
    /* A kernel fault is a CUDA error (exit 5): a pointer into nothing. Not
     * under compute-sanitizer, which would rightly report the fault itself. */
    if (getenv("ASYNCRT_UNDER_SANITIZER")) return;
    assert_tool(5, "%s --grid 1 --block 1 --buf x=f32:4 --arg f32:1 --arg u64:8 --arg u64:8 --arg i32:1",
                kernel_path("saxpy.cu"));
}

int main(void)
{
    asyncrt_context *ctx = test_open_device_or_skip("test_run_gpu");
    if (!ctx) return ASYNCRT_TEST_SKIP;
    asyncrt_context_destroy(ctx);
    test_seed_random("test_run_gpu");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_saxpy),
        cmocka_unit_test(test_template_scale_with_generated_data),
        cmocka_unit_test(test_cp_async_pipeline),
        cmocka_unit_test(test_tma_bulk_1d),
        cmocka_unit_test(test_tma_2d_tensor_maps),
        cmocka_unit_test(test_warp_specialised_mbarrier),
        cmocka_unit_test(test_signature_check_json_and_timing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
