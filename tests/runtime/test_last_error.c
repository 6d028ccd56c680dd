/* The last-error rule (runtime.h): each public call that can fail clears the
 * message on entry, so it never outlives a later success; and the program
 * origin has a name. */
#include <stdlib.h>
#include <string.h>

#include "test_support.h"

static const char *k_good = "extern \"C\" __global__ void k(float *x) { x[0] = 1.0f; }";

static void message_does_not_outlive_a_success(void **state)
{
    asyncrt_context *ctx = *state;
    asyncrt_compile_options o = {.size = sizeof o, .arch = "sm_90"};
    asyncrt_program *p = NULL;
    assert_status(ctx, ASYNCRT_ERROR_COMPILE, asyncrt_program_compile(ctx, "bad.cu", "this is not C++", &o, &p));
    assert_non_null(strstr(asyncrt_context_last_error(ctx), "bad.cu"));
    assert_ok(ctx, asyncrt_program_compile(ctx, "good.cu", k_good, &o, &p));
    assert_string_equal(asyncrt_context_last_error(ctx), "");
    asyncrt_program_destroy(p);

    /* A failure of another kind, then a success of another call. */
    o.arch = "sm_12";
    assert_status(ctx, ASYNCRT_ERROR_UNSUPPORTED_ARCH, asyncrt_program_compile(ctx, "good.cu", k_good, &o, &p));
    assert_non_null(strstr(asyncrt_context_last_error(ctx), "sm_12"));
    assert_ok(ctx, asyncrt_context_set_cache_dir(ctx, NULL));
    assert_string_equal(asyncrt_context_last_error(ctx), "");

    /* A failing call replaces the message with its own. */
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_tensormap_encode(ctx, NULL, NULL));
    const char *first = asyncrt_context_last_error(ctx);
    assert_true(first[0] != '\0');
    assert_status(ctx, ASYNCRT_ERROR_NO_DEVICE, asyncrt_memory_alloc(ctx, 16, &(asyncrt_deviceptr){0}));
    assert_non_null(strstr(asyncrt_context_last_error(ctx), "no device is open"));
}

static void origin_has_a_name(void **state)
{
    asyncrt_context *ctx = *state;
    char *dir = test_make_temp_dir("origin");
    assert_ok(ctx, asyncrt_context_set_cache_dir(ctx, dir));
    asyncrt_compile_options o = {.size = sizeof o, .arch = "sm_90"};
    asyncrt_program *p = NULL;
    assert_ok(ctx, asyncrt_program_compile(ctx, "o.cu", k_good, &o, &p));
    assert_string_equal(asyncrt_program_origin_string(asyncrt_program_origin_of(p)), "compiled");
    asyncrt_program_destroy(p);
    assert_ok(ctx, asyncrt_program_compile(ctx, "o.cu", k_good, &o, &p));
    assert_string_equal(asyncrt_program_origin_string(asyncrt_program_origin_of(p)), "memory cache");
    asyncrt_program_destroy(p);
    asyncrt_context *other;
    assert_int_equal(asyncrt_context_create(&other), ASYNCRT_SUCCESS);
    assert_ok(other, asyncrt_context_set_cache_dir(other, dir));
    assert_ok(other, asyncrt_program_compile(other, "o.cu", k_good, &o, &p));
    assert_string_equal(asyncrt_program_origin_string(asyncrt_program_origin_of(p)), "disk cache");
    asyncrt_program_destroy(p);
    asyncrt_context_destroy(other);
    assert_string_equal(asyncrt_program_origin_string((asyncrt_program_origin)99), "unknown");
    test_remove_tree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(message_does_not_outlive_a_success, test_setup_context, test_teardown_context),
        cmocka_unit_test_setup_teardown(origin_has_a_name, test_setup_context, test_teardown_context),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
