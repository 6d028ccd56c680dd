/* asyncrt-cache push, pull and stats with a remote cache (issue 26): a cache
 * pushed from one machine is pulled into another's empty cache, which then
 * hits its disk; stats shows the tally. The tool comes from
 * ASYNCRT_CACHE_TOOL (set by CMake). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "format.h"
#include "redis_fixture.h"
#include "test_support.h"

/* The tool's output and exit code. */
static char *tool(const char *dir, const char *args, int *rc)
{
    char *cmd = asyncrt__format("'%s' --dir '%s' %s 2>&1", getenv("ASYNCRT_CACHE_TOOL"), dir, args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char *out = calloc(1, 65536);
    size_t n = fread(out, 1, 65535, p);
    out[n] = '\0';
    int status = pclose(p);
    *rc = WEXITSTATUS(status);
    free(cmd);
    return out;
}

static void test_push_pull_stats(void **state)
{
    (void)state;
    redis_server server;
    assert_true(redis_start(&server, false));
    char *dir = test_make_temp_dir("asyncrt-remote-tool");
    char *key = make_key_file(dir, "fleet.key");
    char *a = asyncrt__format("%s/a", dir), *b = asyncrt__format("%s/b", dir);
    const char *src = "extern \"C\" __global__ void t(int *x) { x[0] = 26; }\n";
    /* machine a compiles with no remote; its cache is pushed afterwards */
    remote_run run = {.cache_dir = a, .source_name = "t.cu", .source = src};
    assert_int_equal(remote_compile(&run).origin, ASYNCRT_ORIGIN_COMPILED);
    int rc;
    char *out = tool(a, "push", &rc);
    assert_int_equal(rc, 7); /* no remote configured: said, not pushed */
    assert_non_null(strstr(out, "no remote cache"));
    free(out);
    setenv("ASYNCRT_REMOTE_CACHE", server.spec, 1); /* from the environment, but no key: refused, said why */
    out = tool(a, "push", &rc);
    assert_int_equal(rc, 7);
    assert_non_null(strstr(out, "no remote cache: off: remote cache refused: no HMAC key"));
    free(out);
    setenv("ASYNCRT_REMOTE_CACHE_KEY_FILE", key, 1);
    out = tool(a, "push", &rc);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "push: 1 pushed, 0 refused, 0 failed"));
    free(out);
    out = tool(b, "pull", &rc);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "pull: 1 installed, 0 refused, 0 not for this machine"));
    free(out);
    unsetenv("ASYNCRT_REMOTE_CACHE"); /* b now serves from its own disk */
    run.cache_dir = b;
    assert_int_equal(remote_compile(&run).origin, ASYNCRT_ORIGIN_DISK_CACHE);
    out = tool(b, "stats", &rc);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "1 hits, 0 misses, 0 errors, 0 rejected, 0 stores"));
    free(out);
    setenv("ASYNCRT_REMOTE_CACHE", server.spec, 1);
    out = tool(b, "--json stats", &rc);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "\"remote\": {"));
    assert_non_null(strstr(out, "\"state\": \"redis+unix:"));
    assert_non_null(strstr(out, "\"hits\": 1"));
    free(out);
    unsetenv("ASYNCRT_REMOTE_CACHE");
    unsetenv("ASYNCRT_REMOTE_CACHE_KEY_FILE");
    redis_stop(&server);
    test_remove_tree(dir);
    free(dir), free(key), free(a), free(b);
}

int main(void)
{
    if (!redis_server_program()) {
        printf("SKIP: no redis-server (Debian: redis-server; tools/setup.sh installs it)\n");
        return ASYNCRT_TEST_SKIP;
    }
    if (!getenv("ASYNCRT_CACHE_TOOL")) {
        printf("SKIP: ASYNCRT_CACHE_TOOL is not set (the tools are not built)\n");
        return ASYNCRT_TEST_SKIP;
    }
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_push_pull_stats)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
