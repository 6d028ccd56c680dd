/* asyncrt_context_cache_info (asyncrt/cache.h): the disk cache a context
 * uses, as it read its settings, whether the directory passes the trust
 * checks and why not, and the size rule on the struct. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "asyncrt/cache.h"
#include "test_support.h"

/* A context made after these settings (value NULL: unset), as a process
 * started with them would make one. */
static asyncrt_context *context_with(const char *name, const char *value)
{
    char *old = getenv(name) ? strdup(getenv(name)) : NULL;
    if (value) setenv(name, value, 1);
    else unsetenv(name);
    asyncrt_context *ctx = NULL;
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    if (old) setenv(name, old, 1);
    else unsetenv(name);
    free(old);
    return ctx;
}

static void a_trusted_directory_is_used(void **state)
{
    test_cache_fixture *f = *state;
    asyncrt_cache_info info = ASYNCRT_CACHE_INFO_INIT;
    assert_ok(f->ctx, asyncrt_context_cache_info(f->ctx, &info));
    assert_int_equal(info.size, sizeof info);
    assert_string_equal(info.dir, f->dir);
    assert_true(info.used);
    assert_string_equal(info.why, "");
    assert_false(info.max_malformed);
    assert_true(info.max_bytes == (uint64_t)1 << 30);
}

static void a_directory_others_can_write_is_not_used_and_says_why(void **state)
{
    test_cache_fixture *f = *state;
    assert_int_equal(chmod(f->dir, 0777), 0);
    asyncrt_cache_info info = ASYNCRT_CACHE_INFO_INIT;
    assert_ok(f->ctx, asyncrt_context_cache_info(f->ctx, &info));
    assert_string_equal(info.dir, f->dir);
    assert_false(info.used);
    assert_non_null(strstr(info.why, "writable by others"));
}

static void caching_off_has_no_directory(void **state)
{
    (void)state;
    asyncrt_context *ctx = context_with("ASYNCRT_CACHE", "0");
    asyncrt_cache_info info = ASYNCRT_CACHE_INFO_INIT;
    assert_ok(ctx, asyncrt_context_cache_info(ctx, &info));
    assert_null(info.dir);
    assert_false(info.used);
    assert_non_null(strstr(info.why, "ASYNCRT_CACHE=0"));
    asyncrt_context_destroy(ctx);
}

static void set_cache_dir_null_turns_the_disk_off(void **state)
{
    test_cache_fixture *f = *state;
    assert_ok(f->ctx, asyncrt_context_set_cache_dir(f->ctx, NULL));
    asyncrt_cache_info info = ASYNCRT_CACHE_INFO_INIT;
    assert_ok(f->ctx, asyncrt_context_cache_info(f->ctx, &info));
    assert_null(info.dir);
    assert_false(info.used);
    assert_non_null(strstr(info.why, "set_cache_dir"));
}

static void the_cap_and_shared_mode_are_read_as_the_cache_reads_them(void **state)
{
    (void)state;
    asyncrt_cache_info info = ASYNCRT_CACHE_INFO_INIT;
    asyncrt_context *ctx = context_with("ASYNCRT_CACHE_MAX_BYTES", "512M");
    assert_ok(ctx, asyncrt_context_cache_info(ctx, &info));
    assert_true(info.max_bytes == (uint64_t)512 << 20);
    assert_false(info.max_malformed);
    asyncrt_context_destroy(ctx);

    ctx = context_with("ASYNCRT_CACHE_MAX_BYTES", "lots");
    assert_ok(ctx, asyncrt_context_cache_info(ctx, &info));
    assert_true(info.max_bytes == (uint64_t)1 << 30); /* the default applies */
    assert_true(info.max_malformed);
    asyncrt_context_destroy(ctx);

    ctx = context_with("ASYNCRT_CACHE_SHARED", "1");
    assert_ok(ctx, asyncrt_context_cache_info(ctx, &info));
    assert_true(info.shared);
    asyncrt_context_destroy(ctx);
}

static void bad_arguments_are_refused_naming_the_rule(void **state)
{
    test_cache_fixture *f = *state;
    asyncrt_cache_info info = ASYNCRT_CACHE_INFO_INIT;
    assert_int_equal(asyncrt_context_cache_info(NULL, &info), ASYNCRT_ERROR_INVALID_ARGUMENT);
    assert_int_equal(asyncrt_context_cache_info(f->ctx, NULL), ASYNCRT_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(asyncrt_context_last_error(f->ctx), "cache info: the struct is NULL"));
    asyncrt_cache_info unset = {0};
    assert_int_equal(asyncrt_context_cache_info(f->ctx, &unset), ASYNCRT_ERROR_INVALID_ARGUMENT);
    const char *why = asyncrt_context_last_error(f->ctx);
    assert_non_null(strstr(why, "asyncrt_cache_info.size is 0"));
    assert_non_null(strstr(why, "ASYNCRT_CACHE_INFO_INIT"));
    assert_null(unset.dir); /* nothing written */
    asyncrt_cache_info small = {.size = sizeof small - 1};
    assert_int_equal(asyncrt_context_cache_info(f->ctx, &small), ASYNCRT_ERROR_INVALID_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_trusted_directory_is_used, test_setup_cache_context,
                                        test_teardown_cache_context),
        cmocka_unit_test_setup_teardown(a_directory_others_can_write_is_not_used_and_says_why,
                                        test_setup_cache_context, test_teardown_cache_context),
        cmocka_unit_test(caching_off_has_no_directory),
        cmocka_unit_test_setup_teardown(set_cache_dir_null_turns_the_disk_off, test_setup_cache_context,
                                        test_teardown_cache_context),
        cmocka_unit_test(the_cap_and_shared_mode_are_read_as_the_cache_reads_them),
        cmocka_unit_test_setup_teardown(bad_arguments_are_refused_naming_the_rule, test_setup_cache_context,
                                        test_teardown_cache_context),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
