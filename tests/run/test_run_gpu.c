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

/* scale<double> over N generated values times `factor`, checked exactly; with
 * through_image, a CUBIN made beforehand (here by --emit-cubin, as nvcc -cubin
 * would) is loaded instead of the compile's, and the C++ kernel name still
 * finds its kernel (the image has no name expressions: the compiled program's
 * mangled name is used). */
static void check_scale(int n, double factor, const char *launch, bool through_image)
{
    uint64_t seed = test_random_u32();
    double *want = malloc((size_t)n * sizeof *want);
    assert_non_null(want);
    for (int i = 0; i < n; i++)
        want[i] = factor * (double)(-1 + 2 * (long double)run_random_unit(seed, (uint64_t)i));
    unsigned long long shape[1] = {(unsigned long long)n};
    write_npy_or_fail(tmp_path("scaled.npy"), RUN_F64, shape, 1, want);
    char args[4096];
    snprintf(args, sizeof args,
             "%s --kernel 'scale<double>' %s --buf d=f64:%d:rand=%llu --arg buf:d --arg f64:%g --arg i32:%d",
             kernel_path("scale.cu"), launch, n, (unsigned long long)seed, factor, n);
    if (through_image) {
        assert_tool(0, "%s --compile-only --emit-cubin %s", args, tmp_path("scale.cubin"));
        snprintf(args + strlen(args), sizeof args - strlen(args), " --image %s", tmp_path("scale.cubin"));
    }
    assert_tool(0, "%s --expect d=%s --rtol 0 --atol 0", args, tmp_path("scaled.npy"));
    assert_detects_mismatch(args, "d", RUN_F64, shape, 1, want, (size_t)n);
    free(want);
}

static void test_template_scale_with_generated_data(void **state)
{
    (void)state;
    check_scale(777, 3.0, "--grid 2 --block 128", false);
}

static void test_image_with_a_cpp_name(void **state)
{
    (void)state;
    check_scale(513, 5.0, "--arch sm_90 --grid 2 --block 256", true);
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
    /* --batch: each sample is the mean of a batch of back-to-back launches. */
    assert_tool(0, "%s --grid 16 --block 256 --buf x=f32:4096:rand=1 --buf y=f32:4096 --arg f32:2 --arg buf:x "
                   "--arg buf:y --arg i32:4096 --repeat 3 --batch 50 --json",
                kernel_path("saxpy.cu"));
    assert_non_null(strstr(run_tool_output(), "\"timing\":{\"repeat\":3,\"warmup\":1,\"batch\":50,"));
    /* A kernel fault is a CUDA error (exit 5): a pointer into nothing. Not
     * under compute-sanitizer, which would rightly report the fault itself. */
    if (getenv("ASYNCRT_UNDER_SANITIZER")) return;
    assert_tool(5, "%s --grid 1 --block 1 --buf x=f32:4 --arg f32:1 --arg u64:8 --arg u64:8 --arg i32:1",
                kernel_path("saxpy.cu"));
}

/* Two passes in one run (--then): per-block sums, then their sum, checked
 * with per-output tolerances; each launch timed on its own. */
static void test_two_pass_reduce(void **state)
{
    (void)state;
    enum { N = 65536 + 123, B = 64, T = 256 };
    static float x[N], part[B], total[1];
    int chunk = (N + B - 1) / B;
    double sum_all = 0;
    for (int i = 0; i < N; i++) x[i] = test_random_float(-1, 1);
    for (int b = 0; b < B; b++) {
        double s = 0;
        for (int i = b * chunk; i < (b + 1) * chunk && i < N; i++) s += x[i];
        part[b] = (float)s;
        sum_all += s;
    }
    total[0] = (float)sum_all;
    unsigned long long shape_x[1] = {N}, shape_p[1] = {B}, shape_t[1] = {1};
    write_npy_or_fail(tmp_path("rx.npy"), RUN_F32, shape_x, 1, x);
    write_npy_or_fail(tmp_path("rpart.npy"), RUN_F32, shape_p, 1, part);
    write_npy_or_fail(tmp_path("rtotal.npy"), RUN_F32, shape_t, 1, total);
    char args[4096];
    snprintf(args, sizeof args,
             "%s --buf x=npy:%s --buf part=f32:%d:poison --buf total=f32:1:poison "
             "--kernel block_sum --grid %d --block %d --arg buf:x --arg buf:part --arg i32:%d "
             "--then --kernel block_sum --grid 1 --block %d --arg buf:part --arg buf:total --arg i32:%d "
             "--rtol 1e-4 --atol 1e-4",
             kernel_path("reduce.cu"), tmp_path("rx.npy"), B, B, T, N, T, B);
    assert_tool(0, "%s --expect part=%s --expect total=%s:rtol=1e-4,atol=2e-3 --repeat 3 --json", args,
                tmp_path("rpart.npy"), tmp_path("rtotal.npy"));
    const char *out = run_tool_output();
    assert_non_null(strstr(out, "\"launches\":[{\"kernel\":\"block_sum\""));
    assert_non_null(strstr(out, "\"grid\":[1,1,1],\"block\":[256,1,1]")); /* the second launch's own shape */
    const char *second = strstr(out, "},{\"kernel\":\"block_sum\"");
    assert_non_null(second);
    assert_non_null(strstr(second, "\"timing\":{\"repeat\":3")); /* timed separately */
    assert_non_null(strstr(out, "\"atol\":0.002"));              /* total's own tolerance */
    assert_detects_mismatch(args, "part", RUN_F32, shape_p, 1, part, B);
    assert_detects_mismatch(args, "total", RUN_F32, shape_t, 1, total, 1);
}

/* cooperative_groups::this_grid().sync() with --cooperative. */
static void test_cooperative_grid_sync(void **state)
{
    (void)state;
    enum { GRID = 8, BLOCK = 128, N = GRID * BLOCK * 4 };
    static int32_t in[N], want[N];
    for (int i = 0; i < N; i++) in[i] = (int32_t)(test_random_u32() % 1000000) - 500000;
    for (int i = 0; i < N; i++) want[i] = 3 * in[(i + 1 + N / 2) % N] + 1;
    unsigned long long shape[1] = {N};
    write_npy_or_fail(tmp_path("gin.npy"), RUN_I32, shape, 1, in);
    write_npy_or_fail(tmp_path("gwant.npy"), RUN_I32, shape, 1, want);
    char args[4096];
    snprintf(args, sizeof args,
             "%s --cooperative --grid %d --block %d --buf in=npy:%s --buf tmp=i32:%d:poison --buf out=i32:%d:poison "
             "--arg buf:in --arg buf:tmp --arg buf:out --arg i32:%d",
             kernel_path("grid_sync.cu"), GRID, BLOCK, tmp_path("gin.npy"), N, N, N);
    assert_tool(0, "%s --expect out=%s", args, tmp_path("gwant.npy"));
    assert_non_null(strstr(run_tool_output(), "cooperative"));
    assert_detects_mismatch(args, "out", RUN_I32, shape, 1, want, N);
    /* A grid that cannot be co-resident is refused by the library, not hung. */
    if (getenv("ASYNCRT_UNDER_SANITIZER")) return;
    int rc = run_tool("%s --cooperative --grid 100000 --block 1024 --buf in=i32:4 --buf tmp=i32:4 --buf out=i32:4 "
                      "--arg buf:in --arg buf:tmp --arg buf:out --arg i32:4",
                      kernel_path("grid_sync.cu"));
    if (rc == 0) fail_msg("a 100000-block cooperative grid was launched:\n%s", run_tool_output());
}

/* const CUtensorMap* parameters: --arg tmapptr:NAME. */
static void test_tensor_map_by_pointer(void **state)
{
    (void)state;
    enum { H = 130, W = 200 };
    static float in[H * W], want[H * W];
    for (int i = 0; i < H * W; i++) {
        in[i] = test_random_float(-10, 10);
        want[i] = 2.0f * in[i] + 1.0f;
    }
    unsigned long long shape[2] = {H, W};
    write_npy_or_fail(tmp_path("pin.npy"), RUN_F32, shape, 2, in);
    write_npy_or_fail(tmp_path("pwant.npy"), RUN_F32, shape, 2, want);
    char args[4096];
    snprintf(args, sizeof args,
             "%s --grid 7,9 --block 128 --buf in=npy:%s --buf out=f32:%dx%d:poison --tmap tin=in:box=32,16 "
             "--arg tmapptr:tin --arg buf:out --arg i32:%d --arg i32:%d",
             kernel_path("tma_ptr.cu"), tmp_path("pin.npy"), H, W, W, H);
    assert_tool(0, "%s --expect out=%s", args, tmp_path("pwant.npy"));
    assert_detects_mismatch(args, "out", RUN_F32, shape, 2, want, H * W);
}

/* struct affine_params { float; int; double; } by value. */
static void test_struct_by_value(void **state)
{
    (void)state;
    enum { N = 3000 };
    static float x[N];
    static double want[N];
    float a = test_random_float(-3, 3);
    double bias = test_random_float(-100, 100);
    for (int i = 0; i < N; i++) {
        x[i] = test_random_float(-1, 1);
        want[i] = (double)a * x[i] + bias;
    }
    unsigned long long shape[1] = {N};
    write_npy_or_fail(tmp_path("sx.npy"), RUN_F32, shape, 1, x);
    write_npy_or_fail(tmp_path("swant.npy"), RUN_F64, shape, 1, want);
    char args[4096];
    snprintf(args, sizeof args,
             "%s --grid %d --block 256 --buf x=npy:%s --buf y=f64:%d:poison --arg struct:f32:%.9g,i32:%d,f64:%.17g "
             "--arg buf:x --arg buf:y",
             kernel_path("struct_arg.cu"), (N + 255) / 256, tmp_path("sx.npy"), N, (double)a, N, bias);
    assert_tool(0, "%s --expect y=%s:rtol=1e-15,atol=0 --json", args, tmp_path("swant.npy"));
    assert_non_null(strstr(run_tool_output(), "\"param_sizes\":[16,8,8]"));
    assert_detects_mismatch(args, "y", RUN_F64, shape, 1, want, N);
}

/* buf:NAME+N (elements) and +NB (bytes): d + 256 in C. */
static void test_pointer_offset(void **state)
{
    (void)state;
    enum { N = 1024, OFF = 256 };
    static float x[N], y[N], want[N];
    float a = test_random_float(-2, 2);
    for (int i = 0; i < N; i++) {
        x[i] = test_random_float(-1, 1);
        y[i] = test_random_float(-1, 1);
        want[i] = i < OFF ? y[i] : a * x[i] + y[i];
    }
    unsigned long long shape[1] = {N};
    write_npy_or_fail(tmp_path("ox.npy"), RUN_F32, shape, 1, x);
    write_npy_or_fail(tmp_path("oy.npy"), RUN_F32, shape, 1, y);
    write_npy_or_fail(tmp_path("owant.npy"), RUN_F32, shape, 1, want);
    char args[4096];
    snprintf(args, sizeof args,
             "%s --grid 4 --block 256 --buf x=npy:%s --buf y=npy:%s --arg f32:%.9g --arg buf:x+%d --arg buf:y+%dB "
             "--arg i32:%d",
             kernel_path("saxpy.cu"), tmp_path("ox.npy"), tmp_path("oy.npy"), (double)a, OFF, OFF * 4, N - OFF);
    assert_tool(0, "%s --expect y=%s", args, tmp_path("owant.npy"));
    assert_detects_mismatch(args, "y", RUN_F32, shape, 1, want, N);
    /* Past the end is refused; the end itself (a zero-length view) is not. */
    assert_tool(2, "%s --buf x=f32:4 --arg f32:1 --arg buf:x+5 --arg buf:x --arg i32:0", kernel_path("saxpy.cu"));
    assert_non_null(strstr(run_tool_output(), "past the end of buffer x"));
    assert_tool(0, "%s --buf x=f32:4 --arg f32:1 --arg buf:x+4 --arg buf:x+16B --arg i32:0", kernel_path("saxpy.cu"));
    /* null: a kernel that gets n = 0 never dereferences it. */
    assert_tool(0, "%s --arg f32:1 --arg null --arg null --arg i32:0", kernel_path("saxpy.cu"));
}

/* Programmatic dependent launch: consume (--pdl) waits for produce's writes. */
static void test_pdl_pair(void **state)
{
    (void)state;
    enum { N = 1 << 16 };
    static int32_t want_a[N], want_b[N];
    for (int i = 0; i < N; i++) want_a[i] = 2 * i + 7;
    for (int i = 0; i < N; i++) want_b[i] = want_a[N - 1 - i] + 1;
    unsigned long long shape[1] = {N};
    write_npy_or_fail(tmp_path("pa.npy"), RUN_I32, shape, 1, want_a);
    write_npy_or_fail(tmp_path("pb.npy"), RUN_I32, shape, 1, want_b);
    char args[4096];
    snprintf(args, sizeof args,
             "%s --buf a=i32:%d:poison --buf b=i32:%d:poison --kernel produce --grid %d --block 256 --arg buf:a "
             "--arg i32:%d --then --pdl --kernel consume --grid %d --block 256 --arg buf:a --arg buf:b --arg i32:%d",
             kernel_path("pdl.cu"), N, N, N / 256, N, N / 256, N);
    assert_tool(0, "%s --expect a=%s --expect b=%s --repeat 5", args, tmp_path("pa.npy"), tmp_path("pb.npy"));
    assert_non_null(strstr(run_tool_output(), "PDL"));
    assert_detects_mismatch(args, "b", RUN_I32, shape, 1, want_b, N);
}

/* <cmath> and <cstdint> in a kernel written for nvcc, compiled unchanged
 * (needs the runtime's built-in standard headers). */
static void test_standard_headers_kernel(void **state)
{
    (void)state;
    enum { N = 5000 };
    static float r[N], want[N];
    for (int i = 0; i < N; i++) {
        r[i] = test_random_float(0, 4);
        want[i] = (float)((double)r[i] * r[i] * 3.14159265358979323846) + (float)(i % 8);
    }
    unsigned long long shape[1] = {N};
    write_npy_or_fail(tmp_path("hr.npy"), RUN_F32, shape, 1, r);
    write_npy_or_fail(tmp_path("hwant.npy"), RUN_F32, shape, 1, want);
    char args[4096];
    snprintf(args, sizeof args,
             "%s --grid %d --block 256 --buf r=npy:%s --buf out=f32:%d:poison --arg buf:r --arg buf:out --arg u32:%d "
             "--rtol 1e-5 --atol 1e-5",
             kernel_path("std_headers.cu"), (N + 255) / 256, tmp_path("hr.npy"), N, N);
    assert_tool(0, "%s --expect out=%s", args, tmp_path("hwant.npy"));
    assert_detects_mismatch(args, "out", RUN_F32, shape, 1, want, N);
}

static char g_arch[16]; /* the device's sm_XY, for --emit-lib */

/* --emit-lib: axpy_util.cu (a __device__ function, no kernel) as a
 * relocatable CUBIN and as LTO-IR for this device, each linked into
 * axpy_main.cu's kernel and run: y = fmaf(a, x, y) exactly as the CPU
 * computes it, on fresh random data. */
static void test_emit_lib_linked_and_run(void **state)
{
    (void)state;
    enum { N = 4099 };
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), *want = malloc(N * sizeof *want);
    assert_true(x && y && want);
    for (int i = 0; i < N; i++) {
        x[i] = (float)test_random_u32() / 4294967296.0f * 2 - 1;
        y[i] = (float)test_random_u32() / 4294967296.0f * 2 - 1;
        want[i] = fmaf(1.5f, x[i], y[i]);
    }
    unsigned long long shape[1] = {N};
    write_npy_or_fail(tmp_path("axpy_x.npy"), RUN_F32, shape, 1, x);
    write_npy_or_fail(tmp_path("axpy_y.npy"), RUN_F32, shape, 1, y);
    write_npy_or_fail(tmp_path("axpy_want.npy"), RUN_F32, shape, 1, want);
    char main_cu[4096], util_cu[4096];
    snprintf(main_cu, sizeof main_cu, "%s/tests/link/kernels/axpy_main.cu", getenv("ASYNCRT_TEST_SOURCE_DIR"));
    snprintf(util_cu, sizeof util_cu, "%s/tests/link/kernels/axpy_util.cu", getenv("ASYNCRT_TEST_SOURCE_DIR"));
    static const char *const libs[] = {"axpy_util.cubin", "axpy_util.ltoir"};
    for (int lto = 0; lto < 2; lto++) {
        const char *lib = tmp_path(libs[lto]);
        assert_tool(0, "'%s' --emit-lib '%s' --arch %s", util_cu, lib, g_arch);
        char args[8192];
        snprintf(args, sizeof args,
                 "'%s' --link '%s'%s --grid 8 --block 128 --buf x=f32:%d:npy=%s --buf y=f32:%d:npy=%s "
                 "--arg f32:1.5 --arg buf:x --arg buf:y --arg i32:%d",
                 main_cu, lib, lto ? " --lto" : "", N, tmp_path("axpy_x.npy"), N, tmp_path("axpy_y.npy"), N);
        assert_tool(0, "%s --expect y=%s --rtol 0 --atol 0", args, tmp_path("axpy_want.npy"));
        assert_detects_mismatch(args, "y", RUN_F32, shape, 1, want, N);
    }
    free(x), free(y), free(want);
}

/* On a GPU, --arch auto compiles too: a broken source's error (exit 3) before
 * "no __global__ function" (the CPU test can only do it with --arch). */
static void test_compile_error_before_kernel_verdict_auto(void **state)
{
    (void)state;
    FILE *f = fopen(tmp_path("garbage.cu"), "w");
    assert_non_null(f);
    fputs("this is not C++ {\n", f);
    fclose(f);
    assert_tool(3, "'%s'", tmp_path("garbage.cu"));
    assert_non_null(strstr(run_tool_output(), "error: expected a declaration"));
}

int main(void)
{
    asyncrt_context *ctx = test_open_device_or_skip("test_run_gpu");
    if (!ctx) return ASYNCRT_TEST_SKIP;
    const asyncrt_device_info *d = asyncrt_context_device(ctx);
    snprintf(g_arch, sizeof g_arch, "sm_%d%d", d->cc_major, d->cc_minor);
    asyncrt_context_destroy(ctx);
    test_seed_random("test_run_gpu");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_saxpy),
        cmocka_unit_test(test_template_scale_with_generated_data),
        cmocka_unit_test(test_image_with_a_cpp_name),
        cmocka_unit_test(test_cp_async_pipeline),
        cmocka_unit_test(test_tma_bulk_1d),
        cmocka_unit_test(test_tma_2d_tensor_maps),
        cmocka_unit_test(test_warp_specialised_mbarrier),
        cmocka_unit_test(test_signature_check_json_and_timing),
        cmocka_unit_test(test_two_pass_reduce),
        cmocka_unit_test(test_cooperative_grid_sync),
        cmocka_unit_test(test_tensor_map_by_pointer),
        cmocka_unit_test(test_struct_by_value),
        cmocka_unit_test(test_pointer_offset),
        cmocka_unit_test(test_pdl_pair),
        cmocka_unit_test(test_standard_headers_kernel),
        cmocka_unit_test(test_emit_lib_linked_and_run),
        cmocka_unit_test(test_compile_error_before_kernel_verdict_auto),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
