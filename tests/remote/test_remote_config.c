/* ASYNCRT_REMOTE_CACHE's syntax, the description that hides passwords, the
 * shard choice, and the API's refusals; with ASYNCRT_LIBHIREDIS naming no
 * file (ctest's test_remote_no_hiredis), the refusal of a hiredis that
 * cannot be opened. No server needed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redis_fixture.h"
#include "remote_config.h"
#include "test_support.h"

static bool no_hiredis(void) { return getenv("ASYNCRT_LIBHIREDIS") != NULL; }

static void parse_ok(const char *spec, asyncrt_remote_config *c)
{
    char why[256];
    if (!asyncrt__remote_config_parse(spec, c, why, sizeof why)) fail_msg("%s: %s", spec, why);
}

static void parse_bad(const char *spec, const char *expected)
{
    asyncrt_remote_config c;
    char why[256];
    assert_false(asyncrt__remote_config_parse(spec, &c, why, sizeof why));
    if (!strstr(why, expected)) fail_msg("%s: \"%s\" does not say \"%s\"", spec, why, expected);
    assert_int_equal(c.server_count, 0);
}

static void test_urls(void **state)
{
    (void)state;
    asyncrt_remote_config c;
    parse_ok("redis://cache.example:6380/3", &c);
    assert_int_equal(c.server_count, 1);
    assert_string_equal(c.servers[0].host, "cache.example");
    assert_int_equal(c.servers[0].port, 6380);
    assert_int_equal(c.servers[0].db, 3);
    assert_null(c.servers[0].password);
    assert_int_equal(c.connect_timeout_ms, 100);
    assert_int_equal(c.operation_timeout_ms, 1000);
    assert_string_equal(c.prefix, "asyncrt");
    assert_false(c.read_only);
    asyncrt__remote_config_free(&c);

    parse_ok("redis://127.0.0.1", &c);
    assert_int_equal(c.servers[0].port, 6379);
    asyncrt__remote_config_free(&c);

    parse_ok("redis+unix:///run/redis/r.sock?db=2", &c);
    assert_string_equal(c.servers[0].socket_path, "/run/redis/r.sock");
    assert_int_equal(c.servers[0].db, 2);
    assert_null(c.servers[0].host);
    asyncrt__remote_config_free(&c);

    parse_ok("redis://alice:pw@h:1|read-only|connect-timeout=50|operation-timeout=250|prefix=team|lease-wait=0", &c);
    assert_string_equal(c.servers[0].user, "alice");
    assert_string_equal(c.servers[0].password, "pw");
    assert_true(c.read_only);
    assert_int_equal(c.connect_timeout_ms, 50);
    assert_int_equal(c.operation_timeout_ms, 250);
    assert_int_equal(c.lease_wait_ms, 0);
    assert_string_equal(c.prefix, "team");
    asyncrt__remote_config_free(&c);

    parse_ok("redis://pw@h|read-only=false", &c);
    assert_null(c.servers[0].user);
    assert_string_equal(c.servers[0].password, "pw");
    assert_false(c.read_only);
    asyncrt__remote_config_free(&c);
}

/* prefix= is at most ASYNCRT_REMOTE_PREFIX_MAX (200) characters, none of
 * them a Redis glob character. Before, a prefix over ~92 characters was cut
 * to fit a 160-byte name: with 5000, every value and lease shared one key. */
static void test_prefix_limit(void **state)
{
    (void)state;
    char spec[6000], prefix[5001];
    memset(prefix, 'p', sizeof prefix - 1);
    prefix[200] = '\0';
    asyncrt_remote_config c;
    snprintf(spec, sizeof spec, "redis://h|prefix=%s", prefix);
    parse_ok(spec, &c);
    assert_int_equal(strlen(c.prefix), 200);
    asyncrt__remote_config_free(&c);
    prefix[200] = 'p';
    prefix[201] = '\0';
    snprintf(spec, sizeof spec, "redis://h|prefix=%s", prefix);
    parse_bad(spec, "is 201 characters long; the limit is 200");
    prefix[201] = 'p';
    prefix[5000] = '\0';
    snprintf(spec, sizeof spec, "redis://h|prefix=%s", prefix);
    parse_bad(spec, "is 5000 characters long; the limit is 200");
    parse_bad("redis://h|prefix=team*", "Redis glob characters");
    parse_bad("redis://h|prefix=a[b]", "Redis glob characters");
}

static void test_bad_specs(void **state)
{
    (void)state;
    parse_bad("", "empty");
    parse_bad("http://h", "not a redis:// or redis+unix: URL");
    parse_bad("redis://", "needs a host");
    parse_bad("redis://h:0", "port \"0\"");
    parse_bad("redis://h:99999", "port \"99999\"");
    parse_bad("redis://h/x", "database \"x\"");
    parse_bad("redis+unix:relative.sock", "absolute path");
    parse_bad("redis+unix:/a.sock?x=1", "?db=N");
    parse_bad("redis://h|connect-timeout=0", "connect-timeout=0");
    parse_bad("redis://h|operation-timeout=abc", "milliseconds");
    parse_bad("redis://h|read-only=yes", "true or false");
    parse_bad("redis://h|colour=blue", "unknown attribute \"colour\"");
    parse_bad("redis://h:*", "no shards=");
    parse_bad("redis://h|shards=a,b", "exactly one '*'");
    parse_bad("redis://h-*|shards=a,,b", "empty shard name");
}

static void test_shards(void **state)
{
    (void)state;
    asyncrt_remote_config c;
    parse_ok("redis://127.0.0.1:*|shards=7001,7002,7003", &c);
    assert_int_equal(c.server_count, 3);
    for (int i = 0; i < 3; i++) assert_int_equal(c.servers[i].port, 7001 + i);
    size_t per[3] = {0};
    for (int k = 0; k < 300; k++) {
        uint8_t key[32] = {(uint8_t)k, (uint8_t)(k >> 8), 7};
        size_t s = asyncrt__remote_shard_of(&c, key);
        assert_true(s < 3);
        assert_int_equal(asyncrt__remote_shard_of(&c, key), s); /* stable */
        per[s]++;
    }
    for (int i = 0; i < 3; i++) assert_true(per[i] > 50); /* spread */
    /* rendezvous: dropping a shard moves only the keys it held */
    asyncrt_remote_config two;
    parse_ok("redis://127.0.0.1:*|shards=7001,7002", &two);
    for (int k = 0; k < 300; k++) {
        uint8_t key[32] = {(uint8_t)k, (uint8_t)(k >> 8), 7};
        size_t s = asyncrt__remote_shard_of(&c, key);
        if (s < 2) assert_int_equal(asyncrt__remote_shard_of(&two, key), s);
    }
    asyncrt__remote_config_free(&two);
    asyncrt__remote_config_free(&c);

    parse_ok("redis+unix:/tmp/r-*.sock|shards=a,b", &c);
    assert_string_equal(c.servers[1].socket_path, "/tmp/r-b.sock");
    asyncrt__remote_config_free(&c);
}

static void test_description_hides_passwords(void **state)
{
    (void)state;
    asyncrt_remote_config c;
    char out[512];
    parse_bad("redis://bob:hunter2@h:7/1|shards=x", "exactly one '*'");
    parse_ok("redis://bob:hunter2@h-*:7/1|shards=x,y|prefix=p", &c);
    asyncrt__remote_describe(&c, out, sizeof out);
    assert_null(strstr(out, "hunter2"));
    assert_non_null(strstr(out, "redis://bob:****@h-x:7/1 redis://bob:****@h-y:7/1"));
    assert_non_null(strstr(out, "prefix=p"));
    asyncrt__remote_config_free(&c);
    parse_ok("redis://hunter2@h", &c);
    asyncrt__remote_describe(&c, out, sizeof out);
    assert_null(strstr(out, "hunter2"));
    assert_non_null(strstr(out, "redis://****@h:6379"));
    asyncrt__remote_config_free(&c);
}

/* The API: a bad spec, or (with ASYNCRT_LIBHIREDIS set) no hiredis, is a
 * clear refusal; the context compiles on without a remote. */
static void test_api(void **state)
{
    (void)state;
    char *dir = test_make_temp_dir("asyncrt-remote-config");
    char *key = make_key_file(dir, "k");
    asyncrt_context *ctx;
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                  asyncrt_context_set_remote_cache(ctx, "redis://u:topsecret@h:x", key));
    assert_non_null(strstr(asyncrt_context_last_error(ctx), "port \"x\""));
    assert_null(strstr(asyncrt_context_last_error(ctx), "topsecret"));
    asyncrt_status s = asyncrt_context_set_remote_cache(ctx, "redis://127.0.0.1:1", key);
    asyncrt_remote_cache_stats st = ASYNCRT_REMOTE_CACHE_STATS_INIT;
    assert_ok(ctx, asyncrt_context_remote_cache_stats(ctx, &st));
    if (no_hiredis()) {
        assert_int_equal(s, ASYNCRT_ERROR_UNSUPPORTED);
        assert_non_null(strstr(asyncrt_context_last_error(ctx), "remote cache unavailable: cannot open "
                                                                "/nonexistent/libhiredis.so.0"));
        assert_false(st.enabled);
    } else {
        assert_int_equal(s, ASYNCRT_SUCCESS);
        assert_true(st.enabled);
        assert_non_null(strstr(st.state, "redis://127.0.0.1:1"));
    }
    assert_ok(ctx, asyncrt_context_set_remote_cache(ctx, NULL, NULL));
    assert_ok(ctx, asyncrt_context_remote_cache_stats(ctx, &st));
    assert_false(st.enabled);
    asyncrt_context_destroy(ctx);
    test_remove_tree(dir);
    free(dir), free(key);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_urls),
        cmocka_unit_test(test_bad_specs),
        cmocka_unit_test(test_prefix_limit),
        cmocka_unit_test(test_shards),
        cmocka_unit_test(test_description_hides_passwords),
        cmocka_unit_test(test_api),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
