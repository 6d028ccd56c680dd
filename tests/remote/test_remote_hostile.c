/* A hostile Redis costs a bounded time and memory, never a wrong result
 * (issue 33). A fake server (fake_redis.py) drips a reply a byte per 0.5 s
 * (the command ends at its one deadline, and the breaker trips), declares a
 * 6 GiB reply (refused from the declared length: the process's peak memory
 * does not move), answers SCAN with a name shorter than the prefix (refused,
 * no over-read: this runs in the ASan job too) or with a cursor that never
 * returns to 0 (capped), and answers commands with replies of the wrong
 * type (each refused), with terminal escapes (shown as '?') or with a line
 * over 4096 bytes (refused, however it arrives). Skipped without python3. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "context_internal.h" /* the context's remote, for pull */
#include "redis_fixture.h"
#include "cache.h"
#include "test_support.h"

static char *g_dir, *g_key;

static remote_result compile_against(const char *spec, int n, size_t data_limit_mb)
{
    char *cache = fresh_cache_dir(g_dir), src[200];
    snprintf(src, sizeof src, "extern \"C\" __global__ void h%d(float *x) { x[threadIdx.x] += %d.0f; }\n", n, n);
    remote_run run = {.cache_dir = cache, .spec = spec, .key_file = g_key, .source_name = "h.cu", .source = src,
                      .data_limit_mb = data_limit_mb};
    remote_result r = remote_compile(&run);
    assert_true(r.ran);
    assert_int_equal(r.status, ASYNCRT_SUCCESS); /* a hostile server never fails a compile */
    assert_int_equal(r.origin, ASYNCRT_ORIGIN_COMPILED);
    free(cache);
    return r;
}

static bool start(fake_redis *f, const char *mode, int lifetime_s, const char *count_file)
{
    if (fake_redis_start(f, mode, lifetime_s, count_file)) return true;
    print_message("SKIP: python3 could not run tests/remote/fake_redis.py\n");
    return false;
}

/* One byte per 0.5 s: with a time-out per read, each read succeeded and the
 * 11-byte reply took 5.5 s per command (three commands: over 16 s) and the
 * breaker never tripped. One deadline ends it at operation-timeout. */
static void test_drip_ends_at_the_deadline(void **state)
{
    (void)state;
    fake_redis f;
    if (!start(&f, "drip", 60, NULL)) return;
    char spec[300];
    snprintf(spec, sizeof spec, "%s|connect-timeout=1000|operation-timeout=1000", f.spec);
    remote_result r = compile_against(spec, 1, 0);
    print_message("drip: %.0f ms in the remote (operation timeout 1000 ms), %llu errors\n", r.stats.time_ms,
                  (unsigned long long)r.stats.errors);
    assert_true(r.stats.time_ms >= 900 && r.stats.time_ms < 1500);
    assert_int_equal(r.stats.errors, 1);
    assert_false(r.stats.enabled); /* the breaker: off after the one timed-out command */
    assert_non_null(strstr(r.stats.state, "no answer within the operation timeout"));
    fake_redis_stop(&f);
}

/* "$6442450944": refused from the declared length. hiredis's reader
 * buffered it whole (peak RSS 8.4 GB); the child runs under RLIMIT_DATA of
 * baseline + 2 GiB outside ASan, so that a regression fails, not the machine. */
static void test_huge_reply_is_refused_unread(void **state)
{
    (void)state;
    remote_result base = compile_against(NULL, 2, 0); /* no remote: the compile's own peak */
    fake_redis f;
    if (!start(&f, "huge", 60, NULL)) return;
    char spec[300];
    snprintf(spec, sizeof spec, "%s|operation-timeout=5000", f.spec);
    remote_result r = compile_against(spec, 3, (size_t)base.max_rss_kb / 1024 + 2048);
    long grown_kb = r.max_rss_kb - base.max_rss_kb;
    print_message("huge: peak RSS %ld MiB, %ld MiB without a remote (+%ld MiB); %.0f ms in the remote; state: %s\n",
                  r.max_rss_kb >> 10, base.max_rss_kb >> 10, grown_kb >> 10, r.stats.time_ms, r.stats.state);
    assert_true(grown_kb < 64 * 1024);
    assert_true(r.stats.time_ms < 2000);
    assert_int_equal(r.stats.bytes_read, 0);
    assert_non_null(strstr(r.stats.state, "6442450944 bytes declared, over the limit"));
    fake_redis_stop(&f);
}

/* asyncrt-cache pull's loop over one shard, against f. */
static bool pull(const char *spec, char *why, size_t why_size, size_t counts[3])
{
    asyncrt_context *ctx = NULL;
    char *cache = fresh_cache_dir(g_dir);
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    assert_int_equal(asyncrt_context_set_cache_dir(ctx, cache), ASYNCRT_SUCCESS);
    assert_int_equal(asyncrt_context_set_remote_cache(ctx, spec, g_key), ASYNCRT_SUCCESS);
    size_t present = 0; /* a fresh cache holds nothing already */
    bool ok = asyncrt__cache_remote_pull(asyncrt__context_cache(ctx), &counts[0], &counts[1], &counts[2], &present, why,
                                         why_size);
    assert_int_equal(present, 0);
    asyncrt_context_destroy(ctx);
    free(cache);
    return ok;
}

/* A server in `mode` fails the pull, its why holding `says` and `also`;
 * nothing installed or counted. */
static void assert_pull_fails(const char *mode, const char *says, const char *also)
{
    fake_redis f;
    if (!start(&f, mode, 60, NULL)) return;
    char why[512] = "";
    size_t counts[3] = {0};
    assert_false(pull(f.spec, why, sizeof why, counts));
    print_message("pull failed: %s\n", why);
    assert_non_null(strstr(why, says));
    assert_non_null(strstr(why, also));
    assert_int_equal(counts[0] + counts[1] + counts[2], 0);
    fake_redis_stop(&f);
}

/* A name "abc" under the prefix "asyncrt:v:": pull read 64 bytes past it
 * (a heap over-read under ASan) and counted it refused; now the reply is. */
static void test_scan_short_name_is_refused(void **state)
{
    (void)state;
    assert_pull_fails("shortkey", "SCAN: a reply refused: a name not under the prefix asked for", "\"abc\"");
}

/* SCAN names a value and its GET fails (every command gets the SCAN
 * reply: an array, where GETRANGE returns none): a server failure, so pull
 * fails, saying which value and why. Before, it was counted as a value
 * refused (exit 6, "failed its checks") and the pull succeeded. */
static void test_pull_fails_when_a_get_fails(void **state)
{
    (void)state;
    assert_pull_fails("raw:*2\\r\\n$1\\r\\n0\\r\\n*1\\r\\n$74\\r\\nasyncrt:v:"
                      "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\\r\\n",
                      "the value asyncrt:v:00112233445566778899aabbccddeeff",
                      "GETRANGE: an array, where the command returns none");
}

/* Cursor 1, forever: 1.08 M SCANs in 20 s before; now 10000 rounds, then an error. */
static void test_scan_endless_cursor_is_capped(void **state)
{
    (void)state;
    char count_file[400];
    snprintf(count_file, sizeof count_file, "%s/scans", g_dir);
    fake_redis f;
    if (!start(&f, "endless", 60, count_file)) return;
    char why[512] = "";
    size_t counts[3] = {0};
    double start_ms = asyncrt__now_ms();
    assert_false(pull(f.spec, why, sizeof why, counts));
    double took = asyncrt__now_ms() - start_ms;
    fake_redis_stop(&f);
    FILE *in = fopen(count_file, "r");
    long scans = -1;
    assert_non_null(in);
    assert_int_equal(fscanf(in, "%ld", &scans), 1);
    fclose(in);
    print_message("endless cursor: %ld SCANs in %.0f ms: %s\n", scans, took, why);
    assert_int_equal(scans, 10000);
    assert_non_null(strstr(why, "SCAN did not end after 10000 rounds"));
}

/* A command answered with another type than it returns: refused, the
 * message naming both. Before: SET took ":1" as stored, EVAL's "+OK" read
 * as "not deleted", SCAN's cursor "12abc" as 12 and an integer among its
 * names was skipped silently. */
static char g_long_line[5100];

static void test_wrong_types_are_refused(void **state)
{
    (void)state;
    memset(g_long_line, 'a', 5020); /* raw:*2\r\n+aaa...\r\n*0\r\n: a status of 5000 bytes for SCAN's cursor */
    memcpy(g_long_line, "raw:*2\\r\\n+", 11);
    strcpy(g_long_line + 5012, "\\r\\n*0\\r\\n");
    static const struct {
        const char *reply, *command, *expect;
    } cases[] = {
        {"raw::1\\r\\n", "SET", "SET: a reply of type integer, where +OK was expected"},
        {"raw:+OK\\r\\n", "EVAL", "EVAL: a reply of type status, where an integer was expected"},
        {"raw:*2\\r\\n$5\\r\\n12abc\\r\\n*0\\r\\n", "SCAN", "a cursor that is not a decimal number of 64 bits (\"12abc\")"},
        {"raw:*2\\r\\n:7\\r\\n*0\\r\\n", "SCAN", "a cursor that is not a decimal number of 64 bits (integer)"},
        {"raw:*2\\r\\n$1\\r\\n0\\r\\n*1\\r\\n:5\\r\\n", "SCAN", "a name that is not a bulk string (integer)"},
        {"raw:*2\\r\\n$1\\r\\n0\\r\\n$2\\r\\nno\\r\\n", "SCAN",
         "not an array of a cursor and an array of names (\"no\")"},
        {"raw:*2\\r\\n$1\\r\\n0\\r\\n*1\\r\\n*0\\r\\n", "SCAN", "arrays nested more than 2 deep"},
        {"raw::7\\r\\n", "GETRANGE", "GETRANGE: a reply of type integer, where a bulk string was expected"},
        {"raw:%1\\r\\n+a\\r\\n+b\\r\\n", "GETRANGE", "a reply of unknown type '%'"},
        {"raw:*2147483647\\r\\n", "GETRANGE", "an array, where the command returns none"},
        {"raw:$-5\\r\\n", "GETRANGE", "a length of -5"},
        {"raw:$3\\r\\nabcXY", "GETRANGE", "not followed by CRLF"},
        /* What the server sent reaches messages printable: no terminal escapes. */
        {"raw:-ERR \\x1b[2J\\x07gone\\r\\n", "SET", "SET: the server said ERR ?[2J?gone"},
        {"raw:$1\\x1b]0;x\\r\\n", "GETRANGE", "'$' followed by \"1?]0;x\", not a number of 1 to 18 digits"},
        /* A line longer than 4096 bytes: refused whether it came in one piece or many (it was accepted whole). */
        {g_long_line, "SCAN", "a reply line of more than 4096 bytes with its CRLF (\"+aaaa"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        fake_redis f;
        if (!start(&f, cases[i].reply, 30, NULL)) return;
        asyncrt_remote_server server = {.name = "", .host = "127.0.0.1", .port = f.port};
        char why[512] = "";
        double deadline;
        asyncrt_redis *r = asyncrt__redis_connect(&server, 1000, 5000, &deadline, why, sizeof why);
        assert_non_null(r);
        asyncrt_redis_result got = ASYNCRT_REDIS_OK;
        unsigned long long cursor = 0;
        char **keys = NULL;
        size_t n = 0;
        if (!strcmp(cases[i].command, "SET")) {
            got = asyncrt__redis_set(r, "k", "v", 1, false, 0, deadline, why, sizeof why);
        } else if (!strcmp(cases[i].command, "EVAL")) {
            got = asyncrt__redis_del_if(r, "k", "token", deadline, why, sizeof why);
        } else if (!strcmp(cases[i].command, "SCAN")) {
            got = asyncrt__redis_scan(r, &cursor, "asyncrt:v:*", deadline, &keys, &n, why, sizeof why);
        } else {
            unsigned char *v = NULL;
            size_t size = 0;
            bool big = false;
            got = asyncrt__redis_get(r, "k", 1024, deadline, &v, &size, &big, why, sizeof why);
            free(v);
        }
        print_message("%s answered %s: %s\n", cases[i].command, cases[i].reply + 4, why);
        assert_int_equal(got, ASYNCRT_REDIS_ERROR);
        assert_null(keys);
        assert_non_null(strstr(why, cases[i].expect));
        asyncrt__redis_close(r);
        fake_redis_stop(&f);
    }
}

int main(void)
{
    if (!getenv("ASYNCRT_TEST_SOURCE_DIR")) {
        printf("SKIP: ASYNCRT_TEST_SOURCE_DIR is not set (ctest sets it)\n");
        return ASYNCRT_TEST_SKIP;
    }
    if (system("python3 -c pass >/dev/null 2>&1") != 0) {
        printf("SKIP: no python3 for tests/remote/fake_redis.py\n");
        return ASYNCRT_TEST_SKIP;
    }
    char why[256];
    if (!asyncrt__redis_available(why, sizeof why)) {
        printf("SKIP: %s\n", why);
        return ASYNCRT_TEST_SKIP;
    }
    g_dir = test_make_temp_dir("asyncrt-remote-hostile");
    g_key = make_key_file(g_dir, "fleet.key");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_drip_ends_at_the_deadline),    cmocka_unit_test(test_huge_reply_is_refused_unread),
        cmocka_unit_test(test_scan_short_name_is_refused),   cmocka_unit_test(test_scan_endless_cursor_is_capped),
        cmocka_unit_test(test_pull_fails_when_a_get_fails),
        cmocka_unit_test(test_wrong_types_are_refused),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    test_remove_tree(g_dir);
    free(g_dir), free(g_key);
    return failed;
}
