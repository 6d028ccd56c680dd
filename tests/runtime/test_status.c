#include <string.h>

#include "test_support.h"

static void every_status_has_its_own_name(void **state)
{
    (void)state;
    for (int a = 0; a < ASYNCRT_STATUS_COUNT; a++) {
        const char *name = asyncrt_status_string((asyncrt_status)a);
        assert_non_null(strstr(name, "ASYNCRT_"));
        assert_string_not_equal(name, "ASYNCRT_STATUS_UNKNOWN");
        assert_true(strlen(asyncrt_status_description((asyncrt_status)a)) > 3);
        for (int b = 0; b < a; b++) assert_string_not_equal(name, asyncrt_status_string((asyncrt_status)b));
    }
}

/* The values are ABI (docs/deployment.md, "ABI and versioning"): a row inserted into
 * ASYNCRT_STATUS_MAP instead of appended would renumber those after it. */
static void status_values_keep_their_positions(void **state)
{
    (void)state;
    assert_int_equal(ASYNCRT_SUCCESS, 0);
    assert_int_equal(ASYNCRT_ERROR_INVALID_ARGUMENT, 1);
    assert_int_equal(ASYNCRT_ERROR_DRIVER, 5);
    assert_int_equal(ASYNCRT_ERROR_LAUNCH, 11);
    assert_int_equal(ASYNCRT_ERROR_TENSORMAP_INVALID, 15);
    assert_int_equal(ASYNCRT_ERROR_NO_NVRTC, 17);
    assert_int_equal(ASYNCRT_ERROR_VERSION_MISMATCH, 18);
    assert_int_equal(ASYNCRT_ERROR_CORRUPT, 19);
    assert_int_equal(ASYNCRT_ERROR_CAPTURE, 20);
    assert_string_equal(asyncrt_status_string(ASYNCRT_ERROR_NO_NVRTC), "ASYNCRT_ERROR_NO_NVRTC");
    assert_string_equal(asyncrt_status_description(ASYNCRT_ERROR_IO), "a file could not be read or written");
}

static void unknown_values_are_named_unknown(void **state)
{
    (void)state;
    assert_string_equal(asyncrt_status_string(ASYNCRT_STATUS_COUNT), "ASYNCRT_STATUS_UNKNOWN");
    assert_string_equal(asyncrt_status_string((asyncrt_status)-1), "ASYNCRT_STATUS_UNKNOWN");
    assert_string_equal(asyncrt_status_description((asyncrt_status)999), "unknown status");
}

static void context_starts_with_an_empty_message(void **state)
{
    (void)state;
    asyncrt_context *ctx = NULL;
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    assert_string_equal(asyncrt_context_last_error(ctx), "");
    assert_string_equal(asyncrt_context_last_error(NULL), "");
    asyncrt_context_destroy(ctx);
    asyncrt_context_destroy(NULL);
}

/* The headers' promises: a failed constructor leaves *out NULL (each is
 * primed with a stale pointer first), and every destroy takes NULL. No
 * device is opened here, so the device-bound constructors fail. */
static void failed_constructors_leave_null_and_destroys_take_null(void **state)
{
    (void)state;
    asyncrt_context *ctx = NULL;
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    void *stale = &stale;
    asyncrt_program *program = stale;
    assert_int_not_equal(asyncrt_program_compile(ctx, "k.cu", NULL, NULL, &program), ASYNCRT_SUCCESS);
    assert_null(program);
    asyncrt_compile_options opts = {.size = sizeof opts, .arch = "sm_90"};
    asyncrt_status s = asyncrt_program_compile(ctx, "k.cu", "extern \"C\" __global__ void k() {}", &opts, &program);
    if (s == ASYNCRT_SUCCESS) { /* NVRTC is here: a real program, then no device to load it on */
        asyncrt_module *module = stale;
        assert_int_not_equal(asyncrt_module_load(ctx, program, &module), ASYNCRT_SUCCESS);
        assert_null(module);
    }
    asyncrt_module *built = stale;
    assert_int_not_equal(asyncrt_module_build(ctx, "k.cu", NULL, NULL, &built), ASYNCRT_SUCCESS);
    assert_null(built);
    asyncrt_timer *timer = stale;
    assert_int_not_equal(asyncrt_timer_create(ctx, &timer), ASYNCRT_SUCCESS);
    assert_null(timer);
    asyncrt_stream stream = stale;
    assert_int_not_equal(asyncrt_stream_create(ctx, &stream), ASYNCRT_SUCCESS);
    assert_null(stream);
    asyncrt_map *map = stale;
    assert_int_not_equal(asyncrt_map_create(ctx, NULL, &map), ASYNCRT_SUCCESS);
    assert_null(map);
    asyncrt_tile_op *tile = stale;
    assert_int_not_equal(asyncrt_tile_create(ctx, NULL, &tile), ASYNCRT_SUCCESS);
    assert_null(tile);

    asyncrt_program_destroy(program);
    asyncrt_program_destroy(NULL);
    asyncrt_module_destroy(NULL);
    asyncrt_timer_destroy(NULL);
    asyncrt_map_destroy(NULL);
    asyncrt_tile_destroy(NULL);
    asyncrt_build_batch_release(NULL, 3);
    asyncrt_context_destroy(ctx);
    asyncrt_context_destroy(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_status_has_its_own_name),
        cmocka_unit_test(status_values_keep_their_positions),
        cmocka_unit_test(unknown_values_are_named_unknown),
        cmocka_unit_test(context_starts_with_an_empty_message),
        cmocka_unit_test(failed_constructors_leave_null_and_destroys_take_null),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
