/* asyncrt built without the hiredis headers (remote_redis.c compiled with
 * ASYNCRT_NO_HIREDIS, as where <hiredis/hiredis.h> is missing): it builds,
 * and a remote cache is refused with a message that names the package. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "remote_redis.h"
#include "test_support.h"

static void test_unavailable(void **state)
{
    (void)state;
    char why[512];
    assert_false(asyncrt__redis_available(why, sizeof why));
    assert_non_null(strstr(why, "without the hiredis headers (Debian: libhiredis-dev)"));
    asyncrt_context *ctx;
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    char *dir = test_make_temp_dir("asyncrt-remote-stub");
    char key[300];
    snprintf(key, sizeof key, "%s/k", dir);
    FILE *f = fopen(key, "w");
    fputs("0123456789abcdef0123456789abcdef", f);
    fclose(f);
    chmod(key, 0600);
    assert_status(ctx, ASYNCRT_ERROR_UNSUPPORTED, asyncrt_context_set_remote_cache(ctx, "redis://127.0.0.1", key));
    assert_non_null(strstr(asyncrt_context_last_error(ctx), "remote cache unavailable: this asyncrt was built "
                                                            "without the hiredis headers"));
    asyncrt_context_destroy(ctx);
    test_remove_tree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_unavailable)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
