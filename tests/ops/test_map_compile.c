/* The map op without a GPU: validation, path choice against the target, and
 * compile errors that point into the user's expression. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"

static int setup(void **state)
{
    unsetenv("ASYNCRT_PATH");
    return test_setup_context(state);
}

static int teardown(void **state)
{
    asyncrt_context_destroy(*state);
    unsetenv("ASYNCRT_PATH");
    return 0;
}

static const asyncrt_map_arg k_x = {"x", ASYNCRT_F32}, k_y = {"y", ASYNCRT_F32};
static const asyncrt_map_arg k_ab[] = {{"a", ASYNCRT_F32}, {"b", ASYNCRT_F32}};

static asyncrt_map_desc axpy(const char *expression, asyncrt_op_path path, const char *arch)
{
    asyncrt_map_desc d = {.size = sizeof d,
                          .inputs = &k_x, .input_count = 1, .outputs = &k_y, .output_count = 1,
                          .scalars = k_ab, .scalar_count = 2, .expression = expression,
                          .path = path, .arch = arch};
    return d;
}

static void a_typo_names_the_expression_line(void **state)
{
    asyncrt_context *ctx = *state;
    asyncrt_map *m = NULL;
    asyncrt_map_desc d = axpy("y = a * xx + b;", ASYNCRT_PATH_LDGSTS, "sm_80");
    assert_status(ctx, ASYNCRT_ERROR_COMPILE, asyncrt_map_create(ctx, &d, &m));
    assert_null(m);
    const char *msg = asyncrt_context_last_error(ctx);
    if (!strstr(msg, "map expression(1): error: identifier \"xx\" is undefined"))
        fail_msg("message does not point into the expression:\n%s", msg);

    d = axpy("float t = a * x;\ny = t + bb;", ASYNCRT_PATH_TMA, "sm_90");
    assert_status(ctx, ASYNCRT_ERROR_COMPILE, asyncrt_map_create(ctx, &d, &m));
    msg = asyncrt_context_last_error(ctx);
    if (!strstr(msg, "map expression(2): error: identifier \"bb\" is undefined"))
        fail_msg("message does not name line 2 of the expression:\n%s", msg);
}

static void auto_follows_the_target_without_a_device(void **state)
{
    asyncrt_context *ctx = *state;
    static const struct {
        const char *arch;
        asyncrt_op_path path;
    } cases[] = {{"sm_90", ASYNCRT_PATH_TMA}, {"compute_90a", ASYNCRT_PATH_TMA},
                 {"sm_80", ASYNCRT_PATH_LDGSTS}, {"compute_89", ASYNCRT_PATH_LDGSTS},
                 {"sm_75", ASYNCRT_PATH_PLAIN}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        asyncrt_map *m = NULL;
        asyncrt_map_desc d = axpy("y = a * x + b;", ASYNCRT_PATH_AUTO, cases[i].arch);
        asyncrt_status s = asyncrt_map_create(ctx, &d, &m);
        if (s == ASYNCRT_ERROR_UNSUPPORTED_ARCH) continue; /* this NVRTC dropped the arch */
        assert_ok(ctx, s);
        assert_int_equal(asyncrt_map_path_of(m), cases[i].path);
        assert_true(asyncrt_map_tile_elements(m) > 0);
        /* The target was resolved once, by the op, and its program says why. */
        char why[64];
        snprintf(why, sizeof why, "%s: explicit target", cases[i].arch);
        assert_string_equal(asyncrt_program_arch(asyncrt_map_program(m)), cases[i].arch);
        assert_string_equal(asyncrt_program_arch_reason(asyncrt_map_program(m)), why);
        /* Compiled, but there is no device to launch on. */
        asyncrt_deviceptr p = 16;
        float a = 1, b = 2;
        const void *sc[] = {&a, &b};
        assert_status(ctx, ASYNCRT_ERROR_NO_DEVICE, asyncrt_map_launch(m, 4, &p, &p, sc, NULL));
        asyncrt_map_destroy(m);
    }
}

static void env_forces_a_path_and_a_forced_path_must_fit_the_target(void **state)
{
    asyncrt_context *ctx = *state;
    asyncrt_map *m = NULL;
    asyncrt_map_desc d = axpy("y = a * x + b;", ASYNCRT_PATH_AUTO, "sm_90");
    test_context_setenv(ctx, "ASYNCRT_PATH", "plain");
    assert_ok(ctx, asyncrt_map_create(ctx, &d, &m));
    assert_int_equal(asyncrt_map_path_of(m), ASYNCRT_PATH_PLAIN);
    asyncrt_map_destroy(m);

    d.path = ASYNCRT_PATH_LDGSTS; /* the API option beats the environment */
    assert_ok(ctx, asyncrt_map_create(ctx, &d, &m));
    assert_int_equal(asyncrt_map_path_of(m), ASYNCRT_PATH_LDGSTS);
    asyncrt_map_destroy(m);

    test_context_setenv(ctx, "ASYNCRT_PATH", "tma");
    d = axpy("y = a * x + b;", ASYNCRT_PATH_AUTO, "compute_80");
    assert_status(ctx, ASYNCRT_ERROR_UNSUPPORTED, asyncrt_map_create(ctx, &d, &m));
    assert_non_null(strstr(asyncrt_context_last_error(ctx), "needs sm_90"));

    test_context_setenv(ctx, "ASYNCRT_PATH", "fast");
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_map_create(ctx, &d, &m));
    assert_non_null(strstr(asyncrt_context_last_error(ctx), "'fast'"));
    test_context_setenv(ctx, "ASYNCRT_PATH", NULL);

    d = axpy("y = a * x + b;", ASYNCRT_PATH_LDGSTS, "sm_75");
    assert_status(ctx, ASYNCRT_ERROR_UNSUPPORTED, asyncrt_map_create(ctx, &d, &m));
    assert_non_null(strstr(asyncrt_context_last_error(ctx), "needs sm_80"));
    assert_null(m);
}

static void bad_descriptions_are_refused_with_the_reason(void **state)
{
    asyncrt_context *ctx = *state;
    asyncrt_map *m = NULL;
    asyncrt_map_desc d = axpy("", ASYNCRT_PATH_PLAIN, "sm_80");
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_map_create(ctx, &d, &m));
    assert_non_null(strstr(asyncrt_context_last_error(ctx), "empty"));

    asyncrt_map_arg bad = {"2x", ASYNCRT_F32};
    d = axpy("y = x;", ASYNCRT_PATH_PLAIN, "sm_80");
    d.inputs = &bad;
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_map_create(ctx, &d, &m));
    assert_non_null(strstr(asyncrt_context_last_error(ctx), "'2x'"));

    asyncrt_map_arg reserved = {"asyncrt_x", ASYNCRT_F32};
    d.inputs = &reserved;
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_map_create(ctx, &d, &m));

    asyncrt_map_arg twice = {"y", ASYNCRT_F32};
    d.inputs = &twice;
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_map_create(ctx, &d, &m));
    assert_non_null(strstr(asyncrt_context_last_error(ctx), "'y' is used twice"));

    asyncrt_map_arg odd = {"x", (asyncrt_dtype)99};
    d.inputs = &odd;
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_map_create(ctx, &d, &m));
    assert_non_null(strstr(asyncrt_context_last_error(ctx), "dtype 99"));

    d = axpy("y = x;", ASYNCRT_PATH_PLAIN, "sm_80");
    d.input_count = 0;
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_map_create(ctx, &d, &m));
    d = axpy("y = x;", (asyncrt_op_path)7, "sm_80");
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_map_create(ctx, &d, &m));
    d = axpy("y = x;", ASYNCRT_PATH_AUTO, NULL); /* auto needs a device */
    assert_status(ctx, ASYNCRT_ERROR_NO_DEVICE, asyncrt_map_create(ctx, &d, &m));
    assert_null(m);
}

/* ASYNCRT_MAP_TUNE's store=WORD reaches the kernel as a named mode
 * (kernels_src/map_store.cuh), and each mode compiles where it applies. */
static void store_modes_reach_the_kernel_by_name(void **state)
{
    asyncrt_context *ctx = *state;
    static const struct {
        const char *tune, *arch;
        asyncrt_op_path path;
        const char *expect;
    } cases[] = {{"store=bulk", "sm_90", ASYNCRT_PATH_TMA, "store = ASYNCRT_MAP_STORE_BULK;"},
                 {"store=wb", "sm_90", ASYNCRT_PATH_TMA, "store = ASYNCRT_MAP_STORE_WB;"},
                 /* bulk stores are the TMA path's: elsewhere the default */
                 {"store=bulk", "sm_80", ASYNCRT_PATH_LDGSTS, "store = ASYNCRT_MAP_STORE_CS;"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        asyncrt_map *m = NULL;
        asyncrt_map_desc d = axpy("y = a * x + b;", cases[i].path, cases[i].arch);
        test_context_setenv(ctx, "ASYNCRT_MAP_TUNE", cases[i].tune);
        asyncrt_status s = asyncrt_map_create(ctx, &d, &m);
        test_context_setenv(ctx, "ASYNCRT_MAP_TUNE", NULL);
        if (s == ASYNCRT_ERROR_UNSUPPORTED_ARCH) continue; /* this NVRTC dropped the arch */
        assert_ok(ctx, s);
        if (!strstr(asyncrt_map_source(m), cases[i].expect))
            fail_msg("%s on %s: no \"%s\" in\n%s", cases[i].tune, cases[i].arch, cases[i].expect,
                     asyncrt_map_source(m));
        asyncrt_map_destroy(m);
    }
    asyncrt_map *m = NULL;
    asyncrt_map_desc d = axpy("y = a * x + b;", ASYNCRT_PATH_TMA, "sm_90");
    test_context_setenv(ctx, "ASYNCRT_MAP_TUNE", "store=fast");
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_map_create(ctx, &d, &m));
    test_context_setenv(ctx, "ASYNCRT_MAP_TUNE", NULL);
    assert_non_null(strstr(asyncrt_context_last_error(ctx), "store=cs|wb|bulk"));
    assert_null(m);
}

static void names_and_sizes(void **state)
{
    (void)state;
    assert_string_equal(asyncrt_dtype_name(ASYNCRT_BF16), "bf16");
    assert_int_equal(asyncrt_dtype_size(ASYNCRT_F64), 8);
    assert_int_equal(asyncrt_dtype_size(ASYNCRT_F16), 2);
    assert_null(asyncrt_dtype_name(ASYNCRT_DTYPE_COUNT));
    assert_string_equal(asyncrt_op_path_name(ASYNCRT_PATH_LDGSTS), "ldgsts");
    assert_null(asyncrt_op_path_name((asyncrt_op_path)9));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_typo_names_the_expression_line),
        cmocka_unit_test(auto_follows_the_target_without_a_device),
        cmocka_unit_test(env_forces_a_path_and_a_forced_path_must_fit_the_target),
        cmocka_unit_test(bad_descriptions_are_refused_with_the_reason),
        cmocka_unit_test(store_modes_reach_the_kernel_by_name),
        cmocka_unit_test(names_and_sizes),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
