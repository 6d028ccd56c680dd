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

/* The values are ABI (README, "ABI and versioning"): a row inserted into
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_status_has_its_own_name),
        cmocka_unit_test(status_values_keep_their_positions),
        cmocka_unit_test(unknown_values_are_named_unknown),
        cmocka_unit_test(context_starts_with_an_empty_message),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
