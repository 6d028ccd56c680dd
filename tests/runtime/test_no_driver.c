/* Without a usable driver the library starts, says why, and still compiles. */
#include <stdlib.h>
#include <string.h>

#include "context_internal.h"
#include "test_support.h"

static void no_driver_is_a_clear_status(void **state)
{
    (void)state;
    const char *expect = getenv("ASYNCRT_EXPECT"); /* the phrase ctest says the message holds */
    const char *which = getenv("ASYNCRT_EXPECT_STATUS");
    asyncrt_status want = which && strcmp(which, "NO_DEVICE") == 0 ? ASYNCRT_ERROR_NO_DEVICE
                                                                   : ASYNCRT_ERROR_NO_DRIVER;
    asyncrt_context *ctx;
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    int count = -1;
    assert_status(ctx, want, asyncrt_device_count(ctx, &count));
    assert_int_equal(count, 0);
    if (expect && !strstr(asyncrt_context_last_error(ctx), expect))
        fail_msg("'%s' does not say '%s'", asyncrt_context_last_error(ctx), expect);
    asyncrt_device_info info = ASYNCRT_DEVICE_INFO_INIT;
    assert_status(ctx, want, asyncrt_device_probe(ctx, 0, &info));
    assert_status(ctx, want, asyncrt_context_open_device(ctx, 0));
    assert_null(asyncrt_context_device(ctx));
    /* A second attempt answers the same, from the one load. */
    assert_status(ctx, want, asyncrt_device_count(ctx, &count));
    /* Nor is there a table for the tools that call the driver directly. */
    const asyncrt_driver *drv = (const asyncrt_driver *)1;
    assert_status(ctx, want, asyncrt__context_driver(ctx, &drv));
    assert_null(drv);

    /* Device calls fail cleanly; compiling for a named arch still works. */
    asyncrt_deviceptr ptr = 1;
    assert_status(ctx, ASYNCRT_ERROR_NO_DEVICE, asyncrt_memory_alloc(ctx, 16, &ptr));
    assert_int_equal(ptr, 0);
    asyncrt_program *p = NULL;
    asyncrt_compile_options o = {.size = sizeof o, .arch = "sm_90"};
    assert_ok(ctx, asyncrt_program_compile(ctx, "k.cu", "extern \"C\" __global__ void k() {}", &o, &p));
    asyncrt_module *m = (asyncrt_module *)1;
    assert_status(ctx, ASYNCRT_ERROR_NO_DEVICE, asyncrt_module_load(ctx, p, &m));
    assert_null(m);
    asyncrt_program_destroy(p);
    asyncrt_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(no_driver_is_a_clear_status)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
