/* kernels_src/ through NVRTC, no GPU needed: every file for every arch NVRTC
 * supports, the map op's three paths instantiated per arch, and the clear
 * error a wrapper gives on an arch without its instruction.
 * The two arch matrices (files x archs, map paths x archs) run a sample by
 * default, to keep the README's test command short: every file, arch and
 * path at least once, in a third of the combinations; ASYNCRT_TEST_FULL=1
 * (.ci/run) compiles every combination. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base_internal.h" /* the embedded kernels, NVRTC's archs */
#include "test_support.h"

static int g_archs[64];
static size_t g_arch_count;

static int setup(void **state)
{
    g_arch_count = asyncrt__nvrtc_supported_archs(g_archs, 64);
    assert_true(g_arch_count > 0);
    return test_setup_context(state);
}

/* Compiles for `arch` and returns the status; the image is checked when
 * `expect` is not NULL (PTX targets only). */
static asyncrt_status compile(asyncrt_context *ctx, const char *source, const char *arch, const char *expect)
{
    asyncrt_compile_options o = {.size = sizeof o, .arch = arch};
    asyncrt_program *p = NULL;
    asyncrt_status s = asyncrt_program_compile(ctx, "kernels_test.cu", source, &o, &p);
    if (s == ASYNCRT_SUCCESS && expect) {
        size_t size;
        const char *ptx = asyncrt_program_image(p, &size);
        if (!strstr(ptx, expect)) fail_msg("%s: the PTX lacks '%s'", arch, expect);
    }
    asyncrt_program_destroy(p);
    return s;
}

static void every_file_compiles_for_every_arch(void **state)
{
    asyncrt_context *ctx = *state;
    assert_true(asyncrt__embedded_file_count >= 5);
    for (size_t f = 0; f < asyncrt__embedded_file_count; f++) {
        char source[256];
        snprintf(source, sizeof source, "#include <%s>\n", asyncrt__embedded_files[f].name);
        for (size_t a = 0; a <= g_arch_count; a++) {
            if (!test_full() && (f + a) % 3 != 0) continue; /* the sample: a third, each arch and file in it */
            char arch[32];
            if (a == g_arch_count) snprintf(arch, sizeof arch, "sm_90a");
            else snprintf(arch, sizeof arch, "sm_%d", g_archs[a]);
            asyncrt_status s = compile(ctx, source, arch, NULL);
            if (s != ASYNCRT_SUCCESS)
                fail_msg("%s for %s: %s", asyncrt__embedded_files[f].name, arch, asyncrt_context_last_error(ctx));
        }
    }
}

/* Every wrapper of device.cuh, so each PTX string meets ptxas. */
static const char *k_all_wrappers =
    "#include <asyncrt/device.cuh>\n"
    "extern \"C\" __global__ void all(const __grid_constant__ asyncrt_tensor_map tm, float *g) {\n"
    "    __shared__ alignas(128) float s[1024];\n"
    "    __shared__ unsigned long long bar[2];\n"
    "    asyncrt_cp_async_ca<4>(s, g); asyncrt_cp_async_ca<8>(s, g); asyncrt_cp_async_ca<16>(s, g);\n"
    "    asyncrt_cp_async_cg(s, g); asyncrt_cp_async_commit_group();\n"
    "    asyncrt_cp_async_wait_group<1>(); asyncrt_cp_async_wait_all();\n"
    "    asyncrt_mbarrier_init(bar, 1); asyncrt_cp_async_mbarrier_arrive_noinc(bar);\n"
    "    asyncrt_mbarrier_arrive(bar); asyncrt_mbarrier_arrive_drop(bar);\n"
    "    asyncrt_mbarrier_wait_parity(bar, 0); g[0] = asyncrt_mbarrier_test_wait_parity(bar, 1);\n"
    "#if ASYNCRT_HAS_TMA\n"
    "    asyncrt_fence_mbarrier_init(); asyncrt_fence_proxy_async(); asyncrt_fence_proxy_async_shared_cta();\n"
    "    asyncrt_mbarrier_arrive_expect_tx(bar + 1, 64); asyncrt_mbarrier_expect_tx(bar + 1, 64);\n"
    "    asyncrt_cp_async_bulk_g2s(s, g, 64, bar + 1); g[1] = asyncrt_mbarrier_try_wait_parity(bar + 1, 0);\n"
    "    asyncrt_cp_async_bulk_s2g(g, s, 64); asyncrt_cp_async_bulk_commit_group();\n"
    "    asyncrt_cp_async_bulk_wait_group<0>(); asyncrt_cp_async_bulk_wait_group_read<0>();\n"
    "    asyncrt_prefetch_tensormap(&tm);\n"
    "    asyncrt_tma_load_1d(s, &tm, 0, bar); asyncrt_tma_load_2d(s, &tm, 0, 1, bar);\n"
    "    asyncrt_tma_load_3d(s, &tm, 0, 1, 2, bar); asyncrt_tma_load_4d(s, &tm, 0, 1, 2, 3, bar);\n"
    "    asyncrt_tma_load_5d(s, &tm, 0, 1, 2, 3, 4, bar);\n"
    "    asyncrt_tma_store_1d(&tm, 0, s); asyncrt_tma_store_2d(&tm, 0, 1, s);\n"
    "    asyncrt_tma_store_3d(&tm, 0, 1, 2, s); asyncrt_tma_store_4d(&tm, 0, 1, 2, 3, s);\n"
    "    asyncrt_tma_store_5d(&tm, 0, 1, 2, 3, 4, s);\n"
    "    if (asyncrt_elect_sync()) g[2] = 1;\n"
    "#endif\n"
    "    asyncrt_mbarrier_inval(bar);\n"
    "}\n";

static void every_wrapper_assembles_where_its_arch_allows(void **state)
{
    asyncrt_context *ctx = *state;
    for (size_t a = 0; a <= g_arch_count; a++) {
        char arch[32];
        if (a == g_arch_count) snprintf(arch, sizeof arch, "sm_90a");
        else if (g_archs[a] < 80) continue;
        else snprintf(arch, sizeof arch, "sm_%d", g_archs[a]);
        assert_ok(ctx, compile(ctx, k_all_wrappers, arch, NULL));
    }
    assert_ok(ctx, compile(ctx, k_all_wrappers, "compute_90", "cp.async.bulk.tensor.5d"));
    assert_ok(ctx, compile(ctx, k_all_wrappers, "compute_80", "cp.async.cg.shared.global"));
}

/* A wrapper used below its arch stops the compile with a message naming the arch. */
static void a_wrapper_below_its_arch_names_the_arch_it_needs(void **state)
{
    asyncrt_context *ctx = *state;
    static const struct {
        const char *call, *arch, *needs;
    } cases[] = {
        {"asyncrt_cp_async_bulk_g2s(s, g, 16, &bar);", "sm_80", "cp.async.bulk needs sm_90"},
        {"asyncrt_mbarrier_arrive_expect_tx(&bar, 16);", "sm_89", "needs sm_90"},
        {"asyncrt_tma_load_2d(s, (const asyncrt_tensor_map *)g, 0, 0, &bar);", "sm_80", "needs sm_90"},
        {"asyncrt_fence_proxy_async();", "compute_80", "needs sm_90"},
        {"asyncrt_cp_async_cg(s, g);", "sm_75", "cp.async needs sm_80"},
        {"asyncrt_mbarrier_init(&bar, 1);", "sm_75", "needs sm_80"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char source[1024];
        snprintf(source, sizeof source,
                 "#include <asyncrt/device.cuh>\n"
                 "extern \"C\" __global__ void k(float *g) {\n"
                 "    __shared__ alignas(128) float s[64];\n"
                 "    __shared__ unsigned long long bar;\n"
                 "    %s\n}\n",
                 cases[i].call);
        bool known = false;
        asyncrt__arch parsed;
        assert_true(asyncrt__arch_parse(cases[i].arch, &parsed));
        for (size_t a = 0; a < g_arch_count; a++) known |= g_archs[a] == parsed.number;
        if (!known) continue; /* this NVRTC dropped the arch */
        assert_status(ctx, ASYNCRT_ERROR_COMPILE, compile(ctx, source, cases[i].arch, NULL));
        const char *msg = asyncrt_context_last_error(ctx);
        if (!strstr(msg, cases[i].needs) || !strstr(msg, "static assertion"))
            fail_msg("%s on %s: message lacks '%s':\n%s", cases[i].call, cases[i].arch, cases[i].needs, msg);
    }
}

/* Builds a map for one path and target; NULL where the path does not apply. */
static asyncrt_map *make_map(asyncrt_context *ctx, asyncrt_op_path path, const char *arch,
                             const asyncrt_map_arg *in, size_t nin, const asyncrt_map_arg *out, size_t nout,
                             const char *expression)
{
    static const asyncrt_map_arg scalars[] = {{"a", ASYNCRT_F32}, {"b", ASYNCRT_F32}};
    asyncrt_map_desc d = {.size = sizeof d,
                          .inputs = in, .input_count = nin, .outputs = out, .output_count = nout,
                          .scalars = scalars, .scalar_count = 2, .expression = expression,
                          .path = path, .arch = arch};
    asyncrt_map *m = NULL;
    asyncrt_status s = asyncrt_map_create(ctx, &d, &m);
    if (s != ASYNCRT_SUCCESS) fail_msg("map (%s, %s): %s", asyncrt_op_path_name(path), arch,
                                       asyncrt_context_last_error(ctx));
    assert_int_equal(asyncrt_map_path_of(m), path);
    return m;
}

static const char *path_marker(asyncrt_op_path path)
{
    return path == ASYNCRT_PATH_TMA ? "cp.async.bulk.shared::cluster.global" : "cp.async.cg.shared.global";
}

static void map_paths_compile_for_every_arch(void **state)
{
    asyncrt_context *ctx = *state;
    static const asyncrt_map_arg x = {"x", ASYNCRT_F32}, y = {"y", ASYNCRT_F32};
    for (size_t a = 0; a <= g_arch_count; a++) {
        char sm[32], compute[32];
        int number = a == g_arch_count ? 90 : g_archs[a];
        snprintf(sm, sizeof sm, a == g_arch_count ? "sm_90a" : "sm_%d", number);
        snprintf(compute, sizeof compute, a == g_arch_count ? "compute_90a" : "compute_%d", number);
        for (asyncrt_op_path path = ASYNCRT_PATH_TMA; path <= ASYNCRT_PATH_PLAIN; path++) {
            int need = path == ASYNCRT_PATH_TMA ? 90 : path == ASYNCRT_PATH_LDGSTS ? 80 : 0;
            if (number < need) {
                asyncrt_map_desc d = {.size = sizeof d,
                                      .inputs = &x, .input_count = 1, .outputs = &y, .output_count = 1,
                                      .expression = "y = x;", .path = path, .arch = sm};
                asyncrt_map *m = NULL;
                assert_status(ctx, ASYNCRT_ERROR_UNSUPPORTED, asyncrt_map_create(ctx, &d, &m));
                assert_null(m);
                assert_non_null(strstr(asyncrt_context_last_error(ctx), need == 90 ? "sm_90" : "sm_80"));
                continue;
            }
            if (!test_full() && (a + (size_t)path) % 3 != 0) continue; /* the sample: one path an arch, in turn */
            asyncrt_map_destroy(make_map(ctx, path, sm, &x, 1, &y, 1, "y = a * x + b;"));
            asyncrt_map *m = make_map(ctx, path, compute, &x, 1, &y, 1, "y = a * x + b;");
            const char *ptx = asyncrt_program_image(asyncrt_map_program(m), NULL);
            bool has_bulk = strstr(ptx, "cp.async.bulk.shared::cluster.global") != NULL;
            bool has_cg = strstr(ptx, "cp.async.cg.shared.global") != NULL;
            if (has_bulk != (path == ASYNCRT_PATH_TMA) || has_cg != (path == ASYNCRT_PATH_LDGSTS))
                fail_msg("%s path for %s: cp.async.bulk %s, cp.async.cg %s", asyncrt_op_path_name(path),
                         compute, has_bulk ? "present" : "absent", has_cg ? "present" : "absent");
            if (path != ASYNCRT_PATH_PLAIN) assert_non_null(strstr(ptx, path_marker(path)));
            assert_non_null(strstr(ptx, "st.global.cs.v4"));
            asyncrt_map_destroy(m);
        }
    }
}

/* Every dtype, and a mixed op with two outputs, on each path for sm_90. */
static void map_dtypes_compile_on_every_path(void **state)
{
    asyncrt_context *ctx = *state;
    for (asyncrt_op_path path = ASYNCRT_PATH_TMA; path <= ASYNCRT_PATH_PLAIN; path++) {
        for (asyncrt_dtype t = 0; t < ASYNCRT_DTYPE_COUNT; t++) {
            asyncrt_map_arg in[2] = {{"x", t}, {"z", t}}, out = {"y", t};
            asyncrt_map_destroy(make_map(ctx, path, "sm_90", in, 2, &out, 1, "y = a * x + z * b;"));
        }
        asyncrt_map_arg in[2] = {{"h", ASYNCRT_F16}, {"d", ASYNCRT_F64}};
        asyncrt_map_arg out[2] = {{"f", ASYNCRT_F32}, {"i", ASYNCRT_I32}};
        asyncrt_map_destroy(make_map(ctx, path, "sm_90", in, 2, out, 2,
                                     "f = h * a + (float)d;\ni = (int)(d * b);"));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_file_compiles_for_every_arch),
        cmocka_unit_test(every_wrapper_assembles_where_its_arch_allows),
        cmocka_unit_test(a_wrapper_below_its_arch_names_the_arch_it_needs),
        cmocka_unit_test(map_paths_compile_for_every_arch),
        cmocka_unit_test(map_dtypes_compile_on_every_path),
    };
    return cmocka_run_group_tests(tests, setup, test_teardown_context);
}
