/* The tile ops without a GPU: every template compiles with NVRTC for sm_80
 * (LDGSTS, plain) and sm_90 (all paths), the PTX holds the instructions each
 * path is about, and bad descriptions get their distinct statuses.
 * The two matrices (templates; tunings) run a sample by default, to keep
 * the README's test command short: every kind, dtype, radius, path, arch
 * and tuning still compiles at least once, in fewer combinations;
 * ASYNCRT_TEST_FULL=1 (.ci/run) builds every combination. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"

static const float k_weights[81] = {0.5f, -1.0f, 2.0f, 0.25f, 1.0f, -0.5f, 3.0f, 0.125f, 1.5f};

static asyncrt_tile_desc desc(asyncrt_tile_kind kind, asyncrt_dtype dtype, asyncrt_op_path path, const char *arch)
{
    asyncrt_tile_desc d = {.size = sizeof d, .kind = kind, .dtype = dtype, .path = path, .arch = arch};
    if (kind == ASYNCRT_TILE_MAP) d.expression = "out = v * 2 + (y ^ x);";
    if (kind == ASYNCRT_TILE_STENCIL) {
        d.radius = 1;
        d.weights = k_weights;
    }
    return d;
}

/* Builds the op and checks its PTX (compute_ targets) for `expect` / `absent`. */
static void build(asyncrt_context *ctx, const asyncrt_tile_desc *d, const char *const *expect, const char *absent)
{
    asyncrt_tile_op *op = NULL;
    asyncrt_status s = asyncrt_tile_create(ctx, d, &op);
    if (s != ASYNCRT_SUCCESS)
        fail_msg("tile kind %d %s, %s path, %s, radius %d: %s", (int)d->kind, asyncrt_dtype_name(d->dtype),
                 asyncrt_op_path_name(d->path), d->arch, d->radius, asyncrt_context_last_error(ctx));
    assert_int_equal(asyncrt_tile_path_of(op), d->path);
    const asyncrt_program *prog = asyncrt_tile_program(op);
    if (asyncrt_program_is_ptx(prog)) {
        const char *ptx = asyncrt_program_image(prog, NULL);
        for (; expect && *expect; expect++)
            if (!strstr(ptx, *expect)) fail_msg("%s path for %s: the PTX lacks '%s'", asyncrt_op_path_name(d->path), d->arch, *expect);
        if (absent && strstr(ptx, absent))
            fail_msg("%s path for %s: the PTX has '%s'", asyncrt_op_path_name(d->path), d->arch, absent);
    }
    asyncrt_tile_destroy(op);
}

static void every_template_compiles(void **state)
{
    asyncrt_context *ctx = *state;
    static const asyncrt_dtype dtypes[] = {ASYNCRT_F32, ASYNCRT_I32, ASYNCRT_U32, ASYNCRT_F16, ASYNCRT_BF16};
    static const char *const archs[] = {"sm_90", "sm_80"};
    const size_t n_dtypes = sizeof dtypes / sizeof dtypes[0];
    const bool full = test_full();
    size_t combo = 0; /* the sample: combination c builds kind k in dtype (c + k) % 5 only, radius 1 + c % 4 */
    for (size_t a = 0; a < 2; a++)
        for (asyncrt_op_path path = ASYNCRT_PATH_TMA; path <= ASYNCRT_PATH_PLAIN; path++) {
            if (a == 1 && path == ASYNCRT_PATH_TMA) continue;
            size_t c = combo++;
            for (size_t t = 0; t < n_dtypes; t++) {
                asyncrt_tile_desc d = desc(ASYNCRT_TILE_TRANSPOSE, dtypes[t], path, archs[a]);
                if (full || t == c % n_dtypes) build(ctx, &d, NULL, NULL);
                d = desc(ASYNCRT_TILE_MAP, dtypes[t], path, archs[a]);
                if (full || t == (c + 1) % n_dtypes) build(ctx, &d, NULL, NULL);
                if (!full && t != (c + 2) % n_dtypes) continue;
                d = desc(ASYNCRT_TILE_STENCIL, dtypes[t], path, archs[a]);
                d.radius = 1 + (int)t % ASYNCRT_TILE_MAX_RADIUS;
                if (dtypes[t] == ASYNCRT_I32 || dtypes[t] == ASYNCRT_U32) {
                    d.weights = NULL;
                    d.expression = "out = in(0, 0) * 2 - in(-1, 1) + in(1, -1);";
                }
                build(ctx, &d, NULL, NULL);
            }
            for (int r = 1; r <= ASYNCRT_TILE_MAX_RADIUS; r++) {
                if (!full && r != 1 + (int)(c % ASYNCRT_TILE_MAX_RADIUS)) continue;
                asyncrt_tile_desc d = desc(ASYNCRT_TILE_STENCIL, ASYNCRT_F32, path, archs[a]);
                d.radius = r;
                build(ctx, &d, NULL, NULL);
                d.weights = NULL;
                d.expression = "out = in(-1, 0) + in(0, 1) * in(1, -1);";
                build(ctx, &d, NULL, NULL);
            }
        }
}

/* PTX of each path has the instructions the path is about. */
static void ptx_has_each_paths_instructions(void **state)
{
    asyncrt_context *ctx = *state;
    static const char *const tma[] = {"cp.async.bulk.tensor.2d.shared::cluster.global",
                                      "cp.async.bulk.tensor.2d.global.shared::cta", "mbarrier.try_wait.parity",
                                      "fence.proxy.async.shared::cta", "cp.async.bulk.wait_group.read",
                                      "cp.async.cg.shared.global", NULL}; /* the fallback kernel */
    static const char *const ldgsts[] = {"cp.async.cg.shared.global", "cp.async.wait_group", NULL};
    for (asyncrt_tile_kind kind = ASYNCRT_TILE_MAP; kind <= ASYNCRT_TILE_STENCIL; kind++) {
        asyncrt_tile_desc d = desc(kind, ASYNCRT_F32, ASYNCRT_PATH_TMA, "compute_90");
        build(ctx, &d, tma, NULL);
        d = desc(kind, ASYNCRT_F16, ASYNCRT_PATH_LDGSTS, "compute_80");
        build(ctx, &d, ldgsts, "cp.async.bulk");
        d = desc(kind, ASYNCRT_BF16, ASYNCRT_PATH_PLAIN, "compute_80");
        build(ctx, &d, NULL, "cp.async");
    }
}

static void bad_descriptions_are_rejected(void **state)
{
    asyncrt_context *ctx = *state;
    asyncrt_tile_op *op = (asyncrt_tile_op *)&op;
    static const struct {
        asyncrt_tile_kind kind;
        asyncrt_dtype dtype;
        int radius;
        bool weights;
        const char *expression;
        asyncrt_op_path path;
        const char *arch;
        asyncrt_status status;
        const char *message;
    } cases[] = {
        {ASYNCRT_TILE_STENCIL, ASYNCRT_F32, 0, true, NULL, ASYNCRT_PATH_PLAIN, "sm_90", ASYNCRT_ERROR_INVALID_ARGUMENT, "radius 0 is outside 1..4"},
        {ASYNCRT_TILE_STENCIL, ASYNCRT_F32, 5, true, NULL, ASYNCRT_PATH_PLAIN, "sm_90", ASYNCRT_ERROR_INVALID_ARGUMENT, "radius 5 is outside 1..4"},
        {ASYNCRT_TILE_STENCIL, ASYNCRT_F32, 1, false, NULL, ASYNCRT_PATH_PLAIN, "sm_90", ASYNCRT_ERROR_INVALID_ARGUMENT, "neither"},
        {ASYNCRT_TILE_STENCIL, ASYNCRT_F32, 1, true, "out = 1;", ASYNCRT_PATH_PLAIN, "sm_90", ASYNCRT_ERROR_INVALID_ARGUMENT, "both"},
        {ASYNCRT_TILE_STENCIL, ASYNCRT_I32, 1, true, NULL, ASYNCRT_PATH_PLAIN, "sm_90", ASYNCRT_ERROR_INVALID_ARGUMENT, "the dtype is i32"},
        {ASYNCRT_TILE_TRANSPOSE, ASYNCRT_F64, 0, false, NULL, ASYNCRT_PATH_PLAIN, "sm_90", ASYNCRT_ERROR_UNSUPPORTED, "dtype f64 is not supported"},
        {ASYNCRT_TILE_TRANSPOSE, (asyncrt_dtype)99, 0, false, NULL, ASYNCRT_PATH_PLAIN, "sm_90", ASYNCRT_ERROR_INVALID_ARGUMENT, "dtype 99"},
        {(asyncrt_tile_kind)7, ASYNCRT_F32, 0, false, NULL, ASYNCRT_PATH_PLAIN, "sm_90", ASYNCRT_ERROR_INVALID_ARGUMENT, "kind 7"},
        {ASYNCRT_TILE_MAP, ASYNCRT_F32, 0, false, NULL, ASYNCRT_PATH_PLAIN, "sm_90", ASYNCRT_ERROR_INVALID_ARGUMENT, "needs an expression"},
        {ASYNCRT_TILE_MAP, ASYNCRT_F32, 0, false, "", ASYNCRT_PATH_PLAIN, "sm_90", ASYNCRT_ERROR_INVALID_ARGUMENT, "empty"},
        {ASYNCRT_TILE_TRANSPOSE, ASYNCRT_F32, 0, false, NULL, ASYNCRT_PATH_TMA, "sm_80", ASYNCRT_ERROR_UNSUPPORTED, "needs sm_90"},
        {ASYNCRT_TILE_STENCIL, ASYNCRT_F32, 1, true, NULL, ASYNCRT_PATH_LDGSTS, "sm_75", ASYNCRT_ERROR_UNSUPPORTED, "needs sm_80"},
        {ASYNCRT_TILE_TRANSPOSE, ASYNCRT_F32, 0, false, NULL, (asyncrt_op_path)9, "sm_90", ASYNCRT_ERROR_INVALID_ARGUMENT, "path 9"},
        {ASYNCRT_TILE_MAP, ASYNCRT_F32, 0, false, "out = v +* 2;", ASYNCRT_PATH_PLAIN, "sm_90", ASYNCRT_ERROR_COMPILE, "tile expression(1)"},
        {ASYNCRT_TILE_STENCIL, ASYNCRT_F32, 2, false, "out = in(0, 0);\nout += nope;", ASYNCRT_PATH_PLAIN, "sm_90", ASYNCRT_ERROR_COMPILE, "tile expression(2)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        asyncrt_tile_desc d = {.size = sizeof d,
                               .kind = cases[i].kind, .dtype = cases[i].dtype, .radius = cases[i].radius,
                               .weights = cases[i].weights ? k_weights : NULL, .expression = cases[i].expression,
                               .path = cases[i].path, .arch = cases[i].arch};
        assert_status(ctx, cases[i].status, asyncrt_tile_create(ctx, &d, &op));
        assert_null(op);
        if (!strstr(asyncrt_context_last_error(ctx), cases[i].message))
            fail_msg("case %zu: message lacks '%s': %s", i, cases[i].message, asyncrt_context_last_error(ctx));
    }
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_tile_create(ctx, NULL, &op));
}

/* every_tuning_compiles' sample (arch a of sm_90, sm_80, compute_80; tuning v): compute_80, whose PTX is
 * checked, for every tuning; sm_90's TMA path (which compute_80 lacks) for every other one; sm_80's
 * CUBIN for the first. */
static bool tuning_sampled(size_t a, size_t v, asyncrt_op_path path)
{
    return a == 2 || (a == 0 && v % 2 == 0 && path == ASYNCRT_PATH_TMA) || (a == 1 && v == 0);
}

/* Every variant and shape ASYNCRT_TILE_TUNE offers compiles for sm_90,
 * sm_80 and compute_80 PTX (what an A100 build ships and what the H100 runs
 * JIT-compiled in the benchmark), with each path's instructions. */
static void every_tuning_compiles(void **state)
{
    asyncrt_context *ctx = *state;
    static const char *const ldgsts[] = {"cp.async.cg.shared.global", "cp.async.wait_group", NULL};
    static const char *const archs[] = {"sm_90", "sm_80", "compute_80"};
    /* Each knob's values at least once (the default is every_template_compiles'), few builds: CI time. */
    static const char *const variants[] = {"variant=blocks,l2=256", "variant=rows,threads=128,minctas=0",
                                           "variant=staged,threads=64,l2=128",
                                           "variant=staged,threads=192,ctas=4,stages=3,minctas=8"};
    static const char *const stencils[] = {"opt=8,l2=256", "threads=512,opt=32", "tw=256,opt=32",
                                           "threads=128,ctas=2,stages=2,minctas=4"};
    const bool full = test_full();
    for (size_t a = 0; a < 3; a++) {
        for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
            test_context_setenv(ctx, "ASYNCRT_TILE_TUNE", variants[v]);
            for (asyncrt_op_path path = a ? ASYNCRT_PATH_LDGSTS : ASYNCRT_PATH_TMA; path <= ASYNCRT_PATH_PLAIN; path++) {
                if (!full && !tuning_sampled(a, v, path)) continue;
                asyncrt_tile_desc d = desc(ASYNCRT_TILE_TRANSPOSE, ASYNCRT_F32, path, archs[a]);
                build(ctx, &d, path == ASYNCRT_PATH_LDGSTS ? ldgsts : NULL, path == ASYNCRT_PATH_PLAIN ? "cp.async" : NULL);
                d = desc(ASYNCRT_TILE_MAP, ASYNCRT_F16, path, archs[a]);
                build(ctx, &d, path == ASYNCRT_PATH_LDGSTS ? ldgsts : NULL, path == ASYNCRT_PATH_PLAIN ? "cp.async" : NULL);
            }
        }
        for (size_t v = 0; v < sizeof stencils / sizeof stencils[0]; v++) {
            test_context_setenv(ctx, "ASYNCRT_TILE_TUNE", stencils[v]);
            bool wide = strstr(stencils[v], "tw=256") != NULL; /* TMA boxes are at most 256 wide */
            for (asyncrt_op_path path = a || wide ? ASYNCRT_PATH_LDGSTS : ASYNCRT_PATH_TMA; path <= ASYNCRT_PATH_PLAIN;
                 path++) {
                if (!full && !tuning_sampled(a, v, path)) continue;
                asyncrt_tile_desc d = desc(ASYNCRT_TILE_STENCIL, ASYNCRT_F32, path, archs[a]);
                d.radius = 1 + (int)v % ASYNCRT_TILE_MAX_RADIUS;
                build(ctx, &d, path == ASYNCRT_PATH_LDGSTS ? ldgsts : NULL, path == ASYNCRT_PATH_PLAIN ? "cp.async" : NULL);
            }
        }
    }
    test_context_setenv(ctx, "ASYNCRT_TILE_TUNE", NULL);
}

/* The L2 prefetch hint reaches the PTX of both loads; sm_75 gets 128 for 256. */
static void l2_hints_reach_the_ptx(void **state)
{
    asyncrt_context *ctx = *state;
    static const char *const cp256[] = {"cp.async.cg.shared.global.L2::256B", NULL};
    static const char *const ld128[] = {"ld.global.nc.L2::128B.v4.u32", NULL};
    static const char *const ld256[] = {"ld.global.nc.L2::256B.v4.u32", NULL};
    test_context_setenv(ctx, "ASYNCRT_TILE_TUNE", "l2=256");
    asyncrt_tile_desc d = desc(ASYNCRT_TILE_TRANSPOSE, ASYNCRT_F32, ASYNCRT_PATH_LDGSTS, "compute_80");
    build(ctx, &d, cp256, NULL);
    d = desc(ASYNCRT_TILE_STENCIL, ASYNCRT_F32, ASYNCRT_PATH_PLAIN, "compute_80");
    build(ctx, &d, ld256, NULL);
    d = desc(ASYNCRT_TILE_TRANSPOSE, ASYNCRT_F16, ASYNCRT_PATH_PLAIN, "compute_75");
    build(ctx, &d, ld128, "L2::256B");
    test_context_setenv(ctx, "ASYNCRT_TILE_TUNE", "l2=0");
    d = desc(ASYNCRT_TILE_TRANSPOSE, ASYNCRT_F32, ASYNCRT_PATH_LDGSTS, "compute_80");
    build(ctx, &d, NULL, "L2::");
    test_context_setenv(ctx, "ASYNCRT_TILE_TUNE", NULL);
}

/* A bad ASYNCRT_TILE_TUNE is refused with the rule, never half-applied. */
static void bad_tunings_are_refused(void **state)
{
    asyncrt_context *ctx = *state;
    static const char *const bad[] = {"variant=fast", "threads=96", "threads=512", "opt=12", "stages=0", "stages=5",
                                      "ctas=33", "minctas=17", "minctas=16", "l2=64", "variant", "variant=rows,", "variant=rows;threads=64", "threads=",
                                      "speed=1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        test_context_setenv(ctx, "ASYNCRT_TILE_TUNE", bad[i]);
        asyncrt_tile_desc d = desc(ASYNCRT_TILE_TRANSPOSE, ASYNCRT_F32, ASYNCRT_PATH_LDGSTS, "sm_80");
        asyncrt_tile_op *op = NULL;
        assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_tile_create(ctx, &d, &op));
        assert_null(op);
        if (!strstr(asyncrt_context_last_error(ctx), "ASYNCRT_TILE_TUNE") ||
            !strstr(asyncrt_context_last_error(ctx), bad[i]))
            fail_msg("'%s': %s", bad[i], asyncrt_context_last_error(ctx));
    }
    /* threads=64 is fine for a transpose, not for a stencil (rows of 128 columns); nor
     * 128 threads for 256 columns; nor tw=256 on the TMA path (boxes up to 256 wide) */
    static const char *const bad_stencil[] = {"threads=64", "tw=256,threads=128", "tw=256"};
    for (size_t i = 0; i < 3; i++) {
        test_context_setenv(ctx, "ASYNCRT_TILE_TUNE", bad_stencil[i]);
        asyncrt_tile_desc d = desc(ASYNCRT_TILE_STENCIL, ASYNCRT_F32, i == 2 ? ASYNCRT_PATH_TMA : ASYNCRT_PATH_PLAIN,
                                   i == 2 ? "sm_90" : "sm_80");
        asyncrt_tile_op *op = NULL;
        assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_tile_create(ctx, &d, &op));
        if (!strstr(asyncrt_context_last_error(ctx), i == 2 ? "at most 256 wide" : "tw=128|256"))
            fail_msg("'%s': %s", bad_stencil[i], asyncrt_context_last_error(ctx));
    }
    test_context_setenv(ctx, "ASYNCRT_TILE_TUNE", NULL);
}

/* Without a device an op compiles but refuses to launch. */
static void launch_without_a_device_is_refused(void **state)
{
    asyncrt_context *ctx = *state;
    asyncrt_tile_desc d = desc(ASYNCRT_TILE_TRANSPOSE, ASYNCRT_F32, ASYNCRT_PATH_PLAIN, "sm_80");
    asyncrt_tile_op *op = NULL;
    assert_ok(ctx, asyncrt_tile_create(ctx, &d, &op));
    assert_status(ctx, ASYNCRT_ERROR_NO_DEVICE, asyncrt_tile_launch(op, 4, 4, 256, 512, NULL));
    assert_int_equal(asyncrt_tile_launch_path(op, 4, 4, 256, 512), ASYNCRT_PATH_PLAIN);
    asyncrt_tile_destroy(op);
    asyncrt_tile_destroy(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bad_descriptions_are_rejected),
        cmocka_unit_test(launch_without_a_device_is_refused),
        cmocka_unit_test(ptx_has_each_paths_instructions),
        cmocka_unit_test(every_template_compiles),
        cmocka_unit_test(every_tuning_compiles),
        cmocka_unit_test(bad_tunings_are_refused),
        cmocka_unit_test(l2_hints_reach_the_ptx),
    };
    return cmocka_run_group_tests(tests, test_setup_context, test_teardown_context);
}
