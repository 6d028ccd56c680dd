/* Key records on the remote (issue 36): a compile stored to the remote puts
 * its key record there, so explain --remote on another machine (a fresh
 * local cache, no record of its own) names the cause from the nearest remote
 * record and says it came from the remote; a tampered record (its seal
 * fails) and an oversized one are refused with their reason and not used;
 * a remote hit, and a pull, leave a local record. A redis-server of the
 * test's own (skipped, saying so, where none is installed). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asyncrt/cache.h"
#include "format.h"
#include "redis_fixture.h"
#include "remote_records.h"
#include "test_support.h"

typedef struct world {
    redis_server server;
    char *dir, *key;
    int caches;
} world;

static const char *k_source = "extern \"C\" __global__ void k(float *x) { x[threadIdx.x] += N; }\n";

static int setup(void **state)
{
    if (!redis_server_program()) {
        print_message("skipping: no redis-server installed\n");
        skip();
    }
    world *w = calloc(1, sizeof *w);
    assert_non_null(w);
    redis_world_open(&w->server, &w->dir, &w->key, "asyncrt-remote-records");
    *state = w;
    return 0;
}

static int teardown(void **state)
{
    world *w = *state;
    if (!w) return 0;
    redis_world_close(&w->server, w->dir, w->key);
    free(w);
    return 0;
}

/* A context on a fresh local cache (another machine), with the remote. */
static asyncrt_context *machine(world *w)
{
    asyncrt_context *ctx = NULL;
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    char *cache = asyncrt__format("%s/cache%d", w->dir, w->caches++);
    assert_int_equal(asyncrt_context_set_cache_dir(ctx, cache), ASYNCRT_SUCCESS);
    free(cache);
    assert_int_equal(asyncrt_context_set_remote_cache(ctx, w->server.spec, w->key), ASYNCRT_SUCCESS);
    return ctx;
}

static asyncrt_compile_options options(const char **define)
{
    asyncrt_compile_options o = ASYNCRT_COMPILE_OPTIONS_INIT;
    o.arch = "sm_80";
    o.defines = define, o.define_count = 1;
    return o;
}

static asyncrt_program_origin compile(asyncrt_context *ctx, const char *define)
{
    asyncrt_compile_options o = options(&define);
    asyncrt_program *p = NULL;
    if (asyncrt_program_compile(ctx, "k.cu", k_source, &o, &p) != ASYNCRT_SUCCESS)
        fail_msg("compile: %s", asyncrt_context_last_error(ctx));
    asyncrt_program_origin origin = asyncrt_program_origin_of(p);
    asyncrt_program_destroy(p);
    return origin;
}

static void holds(const char *in, const char *what)
{
    if (!strstr(in, what)) fail_msg("no '%s' in\n%s", what, in);
}

/* explain of k.cu with `define` (remote asked or not), its verdict and the
 * nearest record's tier (JSON: "\"local\"", "\"remote\"", "null") checked;
 * e's strings the caller's. */
static asyncrt_cache_explanation explain(asyncrt_context *ctx, const char *define, bool remote,
                                         asyncrt_cache_verdict verdict, const char *tier)
{
    asyncrt_compile_options o = options(&define);
    asyncrt_cache_explanation e = ASYNCRT_CACHE_EXPLANATION_INIT;
    assert_int_equal(asyncrt_cache_explain(ctx, "k.cu", k_source, &o, remote ? ASYNCRT_CACHE_EXPLAIN_REMOTE : 0, &e),
                     ASYNCRT_SUCCESS);
    assert_non_null(e.text);
    assert_non_null(e.json);
    if (e.verdict != verdict) fail_msg("verdict %d, not %d:\n%s", (int)e.verdict, (int)verdict, e.text);
    char member[64];
    snprintf(member, sizeof member, "\"nearest_tier\": %s", tier);
    holds(e.json, member);
    return e;
}


/* The one record list on the server (the fleet's prefix), malloc'd. */
static char *record_list(world *w)
{
    char **keys = NULL;
    size_t n = redis_keys(&w->server, "*:rec:*", &keys);
    assert_int_equal(n, 1);
    char *name = strdup(keys[0]);
    redis_keys_free(keys, n);
    return name;
}

/* A command on the server directly, no asyncrt logic between; its reply's type. */
static asyncrt_resp_type direct(world *w, int argc, const char **argv, const size_t *lens, asyncrt_resp *reply)
{
    asyncrt_redis *r = redis_direct(&w->server);
    assert_non_null(r);
    const asyncrt_resp_limits limits = {.max_bulk = 1 << 20, .max_elements = 64, .max_bytes = 8 << 20, .max_depth = 1};
    char why[256];
    if (asyncrt__redis_command(r, argc, argv, lens, &limits, asyncrt__now_ms() + 5000, reply, why, sizeof why) !=
        ASYNCRT_REDIS_OK)
        fail_msg("%s: %s", argv[0], why);
    asyncrt__redis_close(r);
    return reply->type;
}

static void a_remote_only_record_explains_a_miss(void **state)
{
    world *w = *state;
    asyncrt_context *a = machine(w), *b = machine(w);
    assert_int_equal(compile(a, "N=1.0f"), ASYNCRT_ORIGIN_COMPILED);
    /* b holds nothing, locally: without the remote, nothing to compare */
    asyncrt_cache_explanation e = explain(b, "N=2.0f", false, ASYNCRT_CACHE_VERDICT_NO_RECORD, "null");
    asyncrt_cache_explanation_free(&e);
    e = explain(b, "N=2.0f", true, ASYNCRT_CACHE_VERDICT_MISS, "\"remote\"");
    assert_int_equal(e.differences, 2); /* -DN=1.0f removed, -DN=2.0f added */
    holds(e.cause, "option -DN=1.0f removed");
    holds(e.text, " (a remote record)\n");
    holds(e.text, "  records  1 key record of k.cu on the remote\n");
    holds(e.json, "\"remote_records\": \"1 key record of k.cu on the remote\"");
    asyncrt_cache_explanation_free(&e);
    /* a's own record is local, and as near: a tie stays local */
    e = explain(a, "N=2.0f", true, ASYNCRT_CACHE_VERDICT_MISS, "\"local\"");
    asyncrt_cache_explanation_free(&e);
    asyncrt_context_destroy(a);
    asyncrt_context_destroy(b);
}

static void a_tampered_record_is_refused(void **state)
{
    world *w = *state;
    asyncrt_context *a = machine(w), *b = machine(w);
    compile(a, "N=1.0f");
    char *list = record_list(w);
    asyncrt_resp reply;
    const char *get[] = {"LINDEX", list, "0"};
    assert_int_equal(direct(w, 3, get, NULL, &reply), ASYNCRT_RESP_BULK);
    reply.str[reply.len - 3] ^= 1; /* one bit of the record's text: its MAC no longer holds */
    const char *set[] = {"LSET", list, "0", reply.str};
    const size_t lens[] = {4, strlen(list), 1, reply.len};
    asyncrt_resp ok;
    assert_int_equal(direct(w, 4, set, lens, &ok), ASYNCRT_RESP_STATUS);
    asyncrt__resp_free(&ok);
    asyncrt__resp_free(&reply);
    asyncrt_cache_explanation e = explain(b, "N=2.0f", true, ASYNCRT_CACHE_VERDICT_NO_RECORD, "null");
    holds(e.text, "0 key records of k.cu on the remote, 1 refused (not used): key record 0: key record: MAC "
                  "mismatch");
    asyncrt_cache_explanation_free(&e);
    free(list);
    asyncrt_context_destroy(a);
    asyncrt_context_destroy(b);
}

static void an_oversized_record_is_refused_unread(void **state)
{
    world *w = *state;
    asyncrt_context *a = machine(w), *b = machine(w);
    compile(a, "N=1.0f");
    char *list = record_list(w);
    size_t big = (64 << 10) + 1;
    char *junk = malloc(big);
    assert_non_null(junk);
    memset(junk, 'x', big);
    const char *push[] = {"LPUSH", list, junk};
    const size_t lens[] = {5, strlen(list), big};
    asyncrt_resp reply;
    assert_int_equal(direct(w, 3, push, lens, &reply), ASYNCRT_RESP_INTEGER);
    asyncrt__resp_free(&reply);
    free(junk);
    asyncrt_cache_explanation e = explain(b, "N=2.0f", true, ASYNCRT_CACHE_VERDICT_MISS, "\"remote\"");
    /* the newest element refused by its length, the one below it still used */
    holds(e.text, "1 key record of k.cu on the remote, 1 refused (not used): key record 0: 65537 bytes, more "
                  "than 65536: refused unread");
    asyncrt_cache_explanation_free(&e);
    asyncrt_remote_cache_stats st = ASYNCRT_REMOTE_CACHE_STATS_INIT;
    assert_int_equal(asyncrt_context_remote_cache_stats(b, &st), ASYNCRT_SUCCESS);
    assert_int_equal(st.rejected, 1);
    assert_true(st.bytes_read < 8192); /* its bytes never came */
    free(list);
    asyncrt_context_destroy(a);
    asyncrt_context_destroy(b);
}

static void a_remote_hit_leaves_a_local_record(void **state)
{
    world *w = *state;
    asyncrt_context *a = machine(w), *b = machine(w);
    compile(a, "N=1.0f");
    assert_int_equal(compile(b, "N=1.0f"), ASYNCRT_ORIGIN_REMOTE_CACHE);
    /* b's own record now: explained locally, the remote not asked */
    asyncrt_cache_explanation e = explain(b, "N=2.0f", false, ASYNCRT_CACHE_VERDICT_MISS, "\"local\"");
    holds(e.cause, "option -DN=1.0f removed");
    asyncrt_cache_explanation_free(&e);
    asyncrt_context_destroy(a);
    asyncrt_context_destroy(b);
}

static void a_pull_writes_the_records_of_what_it_installed(void **state)
{
    world *w = *state;
    asyncrt_context *a = machine(w), *c = machine(w);
    compile(a, "N=1.0f");
    char *cache = asyncrt__format("%s/cache%d", w->dir, w->caches - 1);
    asyncrt_cache_dir *dir = NULL;
    asyncrt_cache_dir_options o = ASYNCRT_CACHE_DIR_OPTIONS_INIT;
    o.dir = cache, o.create = true;
    assert_int_equal(asyncrt_cache_dir_open(c, &o, &dir), ASYNCRT_SUCCESS);
    assert_int_equal(asyncrt_context_use_cache_dir(c, dir), ASYNCRT_SUCCESS);
    asyncrt_cache_dir_pull_result r = ASYNCRT_CACHE_DIR_PULL_RESULT_INIT;
    if (asyncrt_cache_dir_pull(dir, &r) != ASYNCRT_SUCCESS) fail_msg("pull: %s", asyncrt_context_last_error(c));
    assert_int_equal(r.installed, 1);
    assert_int_equal(r.key_records, 1);
    asyncrt_cache_explanation e = explain(c, "N=2.0f", false, ASYNCRT_CACHE_VERDICT_MISS, "\"local\"");
    asyncrt_cache_explanation_free(&e);
    /* again: the record is there, none written */
    assert_int_equal(asyncrt_cache_dir_pull(dir, &r), ASYNCRT_SUCCESS);
    assert_int_equal(r.key_records, 0);
    asyncrt_cache_dir_close(dir);
    free(cache);
    asyncrt_context_destroy(a);
    asyncrt_context_destroy(c);
}

/* The list keeps one record per key1, the newest, and the newest 8 keys. */
static void the_list_keeps_one_record_per_key_and_the_newest(void **state)
{
    world *w = *state;
    asyncrt_diag diag;
    assert_true(asyncrt__diag_init(&diag, 0));
    asyncrt_status status;
    char why[512];
    asyncrt_remote *r = asyncrt__remote_create(w->server.spec, w->key, &diag, &status, why, sizeof why);
    if (!r) fail_msg("%s", why);
    uint8_t list[32] = {1}, key1[32] = {0};
    char payload[32];
    for (int i = 0; i < 12; i++) { /* keys 0..9, then key 3 and key 9 again */
        key1[0] = (uint8_t)(i < 10 ? i : i == 10 ? 3 : 9);
        snprintf(payload, sizeof payload, "record %d", i);
        if (!asyncrt__remote_records_put(r, list, key1, (const unsigned char *)payload, strlen(payload), why,
                                         sizeof why))
            fail_msg("put %d: %s", i, why);
    }
    asyncrt_remote_record got[ASYNCRT_REMOTE_RECORDS_MAX];
    size_t n = 0, refused = 0;
    assert_int_equal(asyncrt__remote_records_get(r, list, got, ASYNCRT_REMOTE_RECORDS_MAX, &n, &refused, why, sizeof why),
                     ASYNCRT_REMOTE_VALUE);
    assert_int_equal(refused, 0);
    assert_int_equal(n, 8);
    /* newest first: 9 (again), 3 (again), then 8 7 6 5 4 2: the older 9 and 3 dropped, 1 and 0 trimmed */
    const int keys[8] = {9, 3, 8, 7, 6, 5, 4, 2};
    for (size_t i = 0; i < n; i++) assert_int_equal(got[i].key1[0], keys[i]);
    assert_memory_equal(got[0].payload, "record 11", 9);
    assert_memory_equal(got[1].payload, "record 10", 9);
    asyncrt__remote_records_free(got, n);
    asyncrt__remote_destroy(r);
    asyncrt__diag_destroy(&diag);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_remote_only_record_explains_a_miss, setup, teardown),
        cmocka_unit_test_setup_teardown(a_tampered_record_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(an_oversized_record_is_refused_unread, setup, teardown),
        cmocka_unit_test_setup_teardown(a_remote_hit_leaves_a_local_record, setup, teardown),
        cmocka_unit_test_setup_teardown(a_pull_writes_the_records_of_what_it_installed, setup, teardown),
        cmocka_unit_test_setup_teardown(the_list_keeps_one_record_per_key_and_the_newest, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
